"""Finding a training run's checkpoints: folders by glob or under a folder, and Hub revisions by
list, pattern or ``all``, listed offline from a Hugging Face cache laid out as huggingface_hub
writes it (read by huggingface_hub's own ``scan_cache_dir`` and ``snapshot_download``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from syntaxgym_helm.clients.checkpoint_sources import (
    CheckpointSearchError,
    folder_checkpoints,
    hub_checkpoints,
    local_folder,
)
from training_runs import hub_cache


def _checkpoint(folder: Path, weights: bytes = b"weights") -> Path:
    folder.mkdir(parents=True)
    (folder / "config.json").write_text('{"model_type": "gpt2"}')
    (folder / "model.safetensors").write_bytes(weights)
    return folder


def test_folders_by_glob_by_parent_or_alone(tmp_path: Path) -> None:
    for step in (10, 2, 30):
        _checkpoint(tmp_path / "out" / f"checkpoint-{step}")
    (tmp_path / "out" / "logs").mkdir()
    _checkpoint(tmp_path / "seeds" / "seed1" / "step100")
    _checkpoint(tmp_path / "seeds" / "seed2" / "step200")
    found = folder_checkpoints(str(tmp_path / "out" / "checkpoint-*"))
    assert [s.name for s in found] == ["checkpoint-10", "checkpoint-2", "checkpoint-30"]
    assert all(s.folder == str(tmp_path / "out" / s.name) and s.repo is None for s in found)
    assert [s.name for s in folder_checkpoints(str(tmp_path / "out"))] == [
        "checkpoint-10", "checkpoint-2", "checkpoint-30"]  # not logs/
    assert [s.name for s in folder_checkpoints(str(tmp_path / "seeds"))] == ["step100",
                                                                           "step200"]
    alone = folder_checkpoints(str(tmp_path / "out" / "checkpoint-2"))
    assert [s.name for s in alone] == ["checkpoint-2"]


def test_a_trainer_s_output_folder_is_its_final_model_and_its_checkpoints(
        tmp_path: Path) -> None:
    # A Trainer's output_dir: checkpoint-N saved during training, the final model at the top.
    out = _checkpoint(tmp_path / "trainer_out", b"final")
    for step in (2, 4, 6):
        _checkpoint(out / f"checkpoint-{step}", str(step).encode())
    (out / "runs").mkdir()  # TensorBoard's logs: not a checkpoint
    found = folder_checkpoints(str(out))
    assert [s.name for s in found] == ["trainer_out", "checkpoint-2", "checkpoint-4",
                                       "checkpoint-6"]
    assert [s.folder for s in found] == [str(out), *(str(out / f"checkpoint-{step}")
                                                     for step in (2, 4, 6))]
    # The same, lying below the folder given; a checkpoint alone is itself.
    assert [s.name for s in folder_checkpoints(str(tmp_path))] == [s.name for s in found]
    assert [s.name for s in folder_checkpoints(str(out / "checkpoint-4"))] == ["checkpoint-4"]


def test_nothing_found_says_where_and_what_is_there(tmp_path: Path) -> None:
    _checkpoint(tmp_path / "out" / "checkpoint-1")
    with pytest.raises(CheckpointSearchError, match=r"matches no folder .*checkpoint-1"):
        folder_checkpoints(str(tmp_path / "out" / "step*"))
    (tmp_path / "empty" / "logs").mkdir(parents=True)
    with pytest.raises(CheckpointSearchError, match=r"no checkpoint folder under it .*logs"):
        folder_checkpoints(str(tmp_path / "empty"))
    with pytest.raises(CheckpointSearchError, match="no such folder"):
        folder_checkpoints(str(tmp_path / "missing"))


@pytest.fixture
def offline_hub(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    from huggingface_hub import constants

    folders = {name: _checkpoint(tmp_path / "saved" / name, name.encode())
               for name in ("chck_1M", "chck_2M", "chck_10M", "chck_100M")}
    folders["main"] = folders["chck_100M"]
    folders["ablation"] = _checkpoint(tmp_path / "saved" / "ablation")
    commits = hub_cache(tmp_path / "hub", "babylm/gpt-bert", folders)
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path / "hub"))
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
    return commits


def test_hub_revisions_by_pattern_list_or_all_pinned_to_their_commits(
        offline_hub: dict[str, str]) -> None:
    found = hub_checkpoints("babylm/gpt-bert", "chck_*M")
    assert sorted(s.name for s in found) == ["chck_100M", "chck_10M", "chck_1M", "chck_2M"]
    assert all(s.commit == offline_hub[s.name] and s.folder is None and s.revision == s.name
               for s in found)
    assert [s.name for s in hub_checkpoints("babylm/gpt-bert", "chck_1M, chck_2M")] in (
        ["chck_1M", "chck_2M"], ["chck_2M", "chck_1M"])
    everything = {s.name for s in hub_checkpoints("babylm/gpt-bert", "all")}
    assert everything == {"chck_1M", "chck_2M", "chck_10M", "chck_100M", "ablation"}  # no main
    fetched = local_folder(found[0])
    assert Path(fetched.folder or "").name == fetched.commit
    assert (Path(fetched.folder or "") / "model.safetensors").read_bytes() == \
        fetched.name.encode()


def test_a_missing_revision_or_repository_is_refused_naming_what_exists(
        offline_hub: dict[str, str]) -> None:
    with pytest.raises(CheckpointSearchError, match=r"no revision chck_3M \(it has ablation"):
        hub_checkpoints("babylm/gpt-bert", "chck_1M,chck_3M")
    with pytest.raises(CheckpointSearchError, match="no revision matches 'step\\*'"):
        hub_checkpoints("babylm/gpt-bert", "step*")
    with pytest.raises(CheckpointSearchError, match="not in the Hugging Face cache"):
        hub_checkpoints("babylm/other", "all")
