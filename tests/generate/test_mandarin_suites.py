"""The shipped Mandarin suites of Wang et al. (2021) are what ``scripts/convert_mandarin_suites.py``
writes from the authors' sentences (their copy in ``tests/fixtures/mandarin_sg``), they validate,
they run by name, and their regions and predictions follow the authors' evaluation."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType

import pytest

from fixtures import FIXTURES_DIR
from syntaxgym_helm.core.registry import converted_suites, load_named_suite
from syntaxgym_helm.core.validation import check_suite

ROOT = Path(__file__).resolve().parents[2]
SHIPPED = ROOT / "syntaxgym_helm" / "suites" / "mandarin"
SOURCE = FIXTURES_DIR / "mandarin_sg"


def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "convert_mandarin_suites", ROOT / "scripts" / "convert_mandarin_suites.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def test_regenerating_gives_the_shipped_suites(tmp_path: Path) -> None:
    script = _script()
    assert script.main(["--source", str(SOURCE), "--output", str(SHIPPED), "--check"]) == 0
    assert script.main(["--source", str(SOURCE), "--output", str(tmp_path)]) == 0
    written = {path.name: path.read_bytes() for path in tmp_path.glob("*.json")}
    assert written == {path.name: path.read_bytes() for path in SHIPPED.glob("*.json")}
    assert len(written) == 28 and (SHIPPED / "LICENSE").is_file()
    (tmp_path / "mandarin_classifier_adj.json").write_text("{}")
    assert script.main(["--source", str(SOURCE), "--output", str(tmp_path), "--check"]) == 1


def test_an_item_that_does_not_fit_its_design_is_an_error_naming_its_lines(tmp_path: Path) -> None:
    script = _script()
    design = next(d for d in script.DESIGNS if d.name == "verb_noun")
    data = "那 位 教授 写 了 书 的 内容 。\n那 位 教授 写 了 书 的 内容 。\n".encode()
    with pytest.raises(script.SourceError, match=r"vo_none_txt.txt lines 1-2: the two lines do "
                                                 r"not differ in the verb"):
        script.convert(design, "none", data)
    with pytest.raises(script.SourceError, match="3 sentences, not a multiple of 2"):
        script.convert(design, "none", data + "他 读 了 书 。\n".encode())


@pytest.mark.parametrize("name", converted_suites())
def test_each_suite_validates_and_loads_by_name(name: str, tmp_path: Path) -> None:
    data = json.loads((SHIPPED / f"{name}.json").read_text(encoding="utf-8"))
    report = check_suite(data, name)
    assert report.ok and not report.warnings, (report.errors[:2], report.warnings[:2])
    suite = load_named_suite(name, tmp_path)
    assert suite.name == name and suite.meta.region_separator == ""
    assert suite.meta.extra["source"]["licence"] == "MIT"


def test_the_papers_figures_cover_every_suite_and_model() -> None:
    """The shipped figures (scripts/mandarin_paper_figures.py, from the authors' token
    surprisals): eight models on each of the paper's 24 suites, each the mean over two or three
    seeds."""
    from syntaxgym_helm.core.files import packaged_table
    from syntaxgym_helm.report.mandarin import PAPER_FILE, paper_figures

    models, figures = paper_figures()
    assert len(models) == 8 and sorted(figures) == sorted(converted_suites())
    assert all(0 <= value <= 1 for row in figures.values() for value in row.values())
    # The authors scored the _pp variants (not in the paper's tables) with six of the models.
    assert {suite for suite, row in figures.items() if len(row) < 8} == {
        f"mandarin_gp_subject_{m}_pp" for m in ("none", "adj", "obj", "sub")}
    assert {row[f"{m} trials"] for row in packaged_table(PAPER_FILE) for m in models
            if row[m]} == {"2", "3"}


def test_the_regions_hold_the_authors_targets(tmp_path: Path) -> None:
    """Item 1 of a suite of each phenomenon: the target of the authors' evaluation is the region
    the predictions compare (the noun and full stop; the relative clause's verb; the relative
    marker; the full stop)."""
    def regions(name: str, condition: str) -> list[str]:
        item = load_named_suite(name, tmp_path).items[0]
        return [region.content for region in item.condition(condition).regions]

    assert regions("mandarin_classifier_adj", "mismatch_noun1") == [
        "我很喜欢一", "首", "国内的", "明星", "。"]
    assert regions("mandarin_gp_object_none", "general") == [
        "他喜欢那", "个", "老板", "投资", "的", "饭店", "。"]
    assert regions("mandarin_gp_subject_adj_pp", "specific") == [
        "那", "家", "亲切的老板在市中心投资", "的", "饭店", "很受欢迎。"]
    assert regions("mandarin_missing_object_sub", "no_object") == ["记者采访了研发产品", "", "。"]
    assert regions("mandarin_subordination_none", "matrix") == [
        "随着政府发展", "，经济变好了", "。"]
    suite = load_named_suite("mandarin_classifier_none", tmp_path)
    assert len(suite.predictions) == 4
    assert str(suite.predictions[0].formula.source) == (
        "((4;%mismatch_noun1%) + (5;%mismatch_noun1%)) > ((4;%match_noun1%) + (5;%match_noun1%))")
    irregular = load_named_suite("mandarin_gp_object_obj", tmp_path).meta.extra[
        "source_irregularities"]
    assert len(irregular) == 1 and irregular[0].startswith("item 25 (lines 49-50)")
