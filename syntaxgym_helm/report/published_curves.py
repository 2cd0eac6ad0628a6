"""A published learning curve beside a sweep's: BLiMP accuracy of Pythia-160m (PolyPythias: 10
seeds x 24 checkpoints x 67 paradigms), as lm-evaluation-harness scored it.

The figures ship in ``syntaxgym_helm/data/pythia160m_blimp_acc.tsv.gz`` (from
github.com/ANN-HumLang/ANN-HumLang-tutorials, MIT; ``scripts/pythia_curves.py`` writes it).
A sweep of a model named ``pythia-160m-seed<N>`` (a Hub repository ``EleutherAI/pythia-160m-seed3``,
or folders named so) gets seed N's curve beside its own, on the paradigms it ran, with what was
scored differently (:func:`differences`): lm-eval's ``acc`` puts the model's beginning-of-text
token and a space (its ``target_delimiter``) before each sentence, counts a tie as right (the
good sentence at least as likely as the bad one), and scores all 1,000 pairs of each paradigm.
"""

from __future__ import annotations

import gzip
import re
from collections.abc import Iterable
from dataclasses import dataclass
from importlib import resources

from syntaxgym_helm.core.run_options import NO_PREFIX

DATA_FILE = "pythia160m_blimp_acc.tsv.gz"
PUBLISHED_MODEL = re.compile(r"(?:^|[/_-])pythia-160m-seed(\d+)$", re.IGNORECASE)
SOURCE = ("PolyPythias (van der Wal et al. 2025), BLiMP accuracy of pythia-160m-seed{seed} by "
          "lm-evaluation-harness, from ANN-HumLang/ANN-HumLang-tutorials")
#: Pairs per BLiMP paradigm the published figures scored.
PUBLISHED_PAIRS = 1000


@dataclass(frozen=True)
class PublishedPoint:
    """One published accuracy: the training step, the paradigm (as the plugin names its suite,
    ``blimp_<UID>``), the accuracy."""

    step: int
    suite: str
    accuracy: float


def published_seed(model: str) -> int | None:
    """The PolyPythias seed a model's name gives (``pythia-160m-seed3`` -> 3), else None."""
    match = PUBLISHED_MODEL.search(model.strip())
    return int(match.group(1)) if match else None


def published_curve(model: str, suites: Iterable[str] | None = None
                    ) -> list[PublishedPoint] | None:
    """Seed N's published points for ``model`` (see the module doc), on ``suites`` (None: all);
    None when the name is not a PolyPythias model's, or no point is of those suites."""
    seed = published_seed(model)
    if seed is None:
        return None
    wanted = None if suites is None else set(suites)
    raw = (resources.files("syntaxgym_helm") / "data" / DATA_FILE).read_bytes()
    points = []
    for line in gzip.decompress(raw).decode("utf-8").splitlines():
        if line.startswith("#") or line.startswith("seed\t"):
            continue
        row_seed, step, suite, accuracy = line.split("\t")
        if int(row_seed) == seed and (wanted is None or suite in wanted):
            points.append(PublishedPoint(int(step), suite, float(accuracy)))
    return points or None


def differences(prefix: str, ties: str, pairs_per_paradigm: int | None) -> list[str]:
    """What the published curve scored differently from this sweep, one line each."""
    lines = ["published: lm-evaluation-harness `acc`, the model's beginning-of-text token and "
             "a space before each sentence (its target delimiter); here: "
             + ("nothing before each sentence (prefix=none)" if prefix == NO_PREFIX else
                f"the prefix {prefix!r}" if prefix not in ("", "auto")
                else "the model's beginning-of-text token (the plugin's engine), no space")]
    if ties != "pass":
        lines.append("published: a tie (both sentences equally likely) counts as right; here it "
                     f"fails (ties={ties}; ties=pass scores as lm-eval does)")
    if pairs_per_paradigm is not None and pairs_per_paradigm < PUBLISHED_PAIRS:
        lines.append(f"published: all {PUBLISHED_PAIRS:,} pairs of each paradigm; here a sample "
                     f"of {pairs_per_paradigm} (the same at every checkpoint)")
    return lines
