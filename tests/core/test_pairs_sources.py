"""``scripts/pairs_sources.py`` writes each data set's file table from its declaration alone:
the committed tables of TurBLiMP (a column map) and RuBLiMP (a column map whose files' group is
read from their rows) are what it writes from the whole data sets in the test archive."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import pytest

from fixtures import FULL_MULTILINGUAL_DIR
from syntaxgym_helm.core.minimal_pairs.catalogue import DATASETS

ROOT = Path(__file__).resolve().parents[2]


def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("pairs_sources",
                                                  ROOT / "scripts" / "pairs_sources.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("name", ["turblimp", "rublimp"])
def test_the_committed_table_is_what_the_script_writes_from_the_declaration(name: str) -> None:
    dataset = DATASETS[name]
    folder = FULL_MULTILINGUAL_DIR / dataset.shared_folder.removeprefix("multilingual/")
    text = _script().table(dataset, folder)
    committed = (ROOT / "syntaxgym_helm" / "data" / dataset.table).read_text(encoding="utf-8")
    assert text == committed
    assert len(text.splitlines()) == 3 + len(dataset.files())


def test_a_folder_without_the_data_sets_files_is_refused(tmp_path: Path) -> None:
    with pytest.raises(SystemExit, match=r"turblimp: no file matches \*/\*\.csv"):
        _script().table(DATASETS["turblimp"], tmp_path)
