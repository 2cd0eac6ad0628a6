"""Every registered minimal-pair data set has each part docs/adding_a_dataset.md lists, and no
shared code names a data set: a failure says which step of the guide is missing."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from syntaxgym_helm.core.minimal_pairs.catalogue import DATASETS
from syntaxgym_helm.core.minimal_pairs.dataset import DataSet
from syntaxgym_helm.harness.leaderboard import generated_files

ROOT = Path(__file__).resolve().parents[2]
GUIDE = "docs/adding_a_dataset.md"
LAYER = ROOT / "syntaxgym_helm" / "core" / "minimal_pairs"
#: The layer's own modules: every other module of the folder is a data set's.
LAYER_MODULES = {"__init__", "catalogue", "columns", "convert", "dataset", "fetch", "papers",
                 "regions", "reuse"}


def _read(relative: str) -> str:
    return " ".join((ROOT / relative).read_text(encoding="utf-8").split())


@pytest.fixture(params=list(DATASETS), ids=list(DATASETS))
def dataset(request: pytest.FixtureRequest) -> DataSet:
    found: DataSet = DATASETS[request.param]
    return found


def test_the_guide_lists_every_step_this_file_checks() -> None:
    guide = _read(GUIDE)
    for step in ("core/minimal_pairs/", "Columns", "catalogue.py", "scripts/pairs_sources.py",
                 "LICENSE", "docs/environment.md", "docs/references.md",
                 "scripts/generate_leaderboard_files.py", "docs/multilingual.md",
                 "tests/architecture/test_datasets.py"):
        assert step in guide, f"{GUIDE} does not mention {step}"


def test_its_files_are_listed_in_the_package(dataset: DataSet) -> None:
    table = ROOT / "syntaxgym_helm" / "data" / dataset.table
    assert table.is_file(), (
        f"{dataset.name}: syntaxgym_helm/data/{dataset.table} is missing: write it with "
        f"`python scripts/pairs_sources.py --dataset {dataset.name}` ({GUIDE}, step 3)")
    files = dataset.files()
    assert files, f"syntaxgym_helm/data/{dataset.table} lists no file ({GUIDE}, step 3)"
    for file in files:
        assert file.suite.startswith(dataset.prefix), (
            f"{dataset.table}: suite {file.suite} does not start with {dataset.prefix}")
        described = dataset.describe(file.path)
        assert (described.suite, described.language) == (file.suite, file.language), (
            f"{dataset.table}: {file.path} is described as {described.suite} "
            f"({described.language}), the table says {file.suite} ({file.language}): rewrite the "
            f"table with scripts/pairs_sources.py ({GUIDE}, step 3)")
        assert file.language in dataset.languages, (
            f"{dataset.table}: {file.suite}'s language {file.language} is not among the "
            f"declaration's languages {dataset.languages}")


def test_the_licence_names_its_shipped_files_and_licence(dataset: DataSet) -> None:
    licence = _read("LICENSE")
    assert dataset.table in licence, (
        f"LICENSE does not name syntaxgym_helm/data/{dataset.table}: add it to the list of "
        f"shipped data files ({GUIDE}, step 4)")
    assert dataset.licence.replace("-", " ").split()[0] in licence, (
        f"LICENSE does not name {dataset.title}'s licence {dataset.licence} ({GUIDE}, step 4)")


def test_its_offline_variable_is_documented(dataset: DataSet) -> None:
    assert f"`{dataset.env_var}`" in _read("docs/environment.md"), (
        f"docs/environment.md has no row for {dataset.env_var}, {dataset.title}'s offline "
        f"folder ({GUIDE}, step 5)")


def test_its_paper_and_pinned_commit_are_in_the_references(dataset: DataSet) -> None:
    references = _read("docs/references.md")
    assert dataset.commit in references, (
        f"docs/references.md does not name {dataset.title}'s pinned commit {dataset.commit} "
        f"of {dataset.repository} ({GUIDE}, step 6)")
    assert dataset.repository in references, (
        f"docs/references.md does not link {dataset.repository} ({GUIDE}, step 6)")


def test_its_leaderboard_files_are_generated(dataset: DataSet) -> None:
    committed = generated_files()
    conf = Path(f"run_specs/syntaxgym_{dataset.name}.conf")
    assert conf in committed, f"the leaderboard generates no {conf}"
    stale = [str(path) for path, text in committed.items()
             if (dataset.name in path.name or path.suffix == ".yaml")
             and (not (ROOT / path).is_file() or (ROOT / path).read_text("utf-8") != text)]
    assert not stale, (
        f"{', '.join(stale)} do not hold {dataset.title}'s suites as registered: run "
        f"`python scripts/generate_leaderboard_files.py` ({GUIDE}, step 7)")


def test_the_docs_describe_it(dataset: DataSet) -> None:
    pages = ["docs/multilingual.md", f"docs/{dataset.name}.md"]
    described = [page for page in pages if (ROOT / page).is_file()
                 and dataset.title in _read(page) and f"`{dataset.prefix}" in _read(page)]
    assert described, (
        f"neither {' nor '.join(pages)} describes {dataset.title} and its suite names "
        f"`{dataset.prefix}...` ({GUIDE}, step 8)")


def test_the_check_of_shared_code_finds_a_data_set_named() -> None:
    words = {"blimp": "blimp", "BLIMP": "blimp"}
    tree = ast.parse('if dataset is BLIMP or name == "blimp":\n    pass\n')
    assert sorted(_names_of_datasets(tree, words)) == [(1, "'blimp'"), (1, "BLIMP")]


def _names_of_datasets(tree: ast.AST, words: dict[str, str]) -> list[tuple[int, str]]:
    """Where a module's code names a data set: a string that is its name or a constant that is
    its declaration."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and \
                node.value in words:
            found.append((node.lineno, repr(node.value)))
        elif isinstance(node, ast.Name) and node.id in words:
            found.append((node.lineno, node.id))
    return found


#: Modules that name a sentence score after the paper that defined it (``zhoblimp``: ZhoBLiMP's
#: SLLN-LP, a score any run may use), not a data set.
SCORE_MODULES = {ROOT / "syntaxgym_helm" / "core" / "sentence_scores.py"}


def test_no_shared_code_names_a_data_set() -> None:
    """Only a data set's own modules and its registration (catalogue.py) name it: the layer, the
    registry, the harness, the report and the scripts read what the declarations say."""
    words = {name: name for name in DATASETS} | {name.upper(): name for name in DATASETS}
    own = {path.stem for path in LAYER.glob("*.py")} - LAYER_MODULES
    offenders = []
    for path in [*sorted((ROOT / "syntaxgym_helm").rglob("*.py")),
                 *sorted((ROOT / "scripts").glob("*.py"))]:
        if (path.parent == LAYER and (path.stem in own or path.stem == "catalogue")) or \
                path in SCORE_MODULES:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        offenders += [f"{path.relative_to(ROOT)}:{line}: {what}"
                      for line, what in _names_of_datasets(tree, words)]
    assert not offenders, ("shared code names a data set (declare what differs in its DataSet "
                           f"instead; {GUIDE}): " + "; ".join(offenders))


def test_every_module_of_the_layer_folder_is_the_layer_or_a_registered_data_set() -> None:
    modules = {path.stem for path in LAYER.glob("*.py")} - LAYER_MODULES
    registered = {module for module in modules
                  if any(module == name or module.startswith(f"{name}_") for name in DATASETS)}
    assert modules == registered, (
        f"core/minimal_pairs/ holds {sorted(modules - registered)}, neither the layer nor a "
        f"data set registered in catalogue.py ({GUIDE}, step 2)")
