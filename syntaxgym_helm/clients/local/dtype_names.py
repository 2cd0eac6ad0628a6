"""The dtypes the local engine accepts, by name, checked without importing torch (a client is
made in every run that names it, also when the request cache answers every request and no model
is loaded)."""

from __future__ import annotations

#: Accepted name -> the torch dtype's attribute name.
DTYPE_NAMES = {"float32": "float32", "float": "float32", "bfloat16": "bfloat16",
               "float16": "float16", "half": "float16"}


def dtype_attribute(dtype: object) -> str:
    """The torch attribute name of ``dtype`` (a name, ``torch.<name>`` or a torch dtype); a
    ValueError naming the accepted names otherwise."""
    text = str(dtype)
    name = text[len("torch."):] if text.startswith("torch.") else text
    if name not in DTYPE_NAMES:
        raise ValueError(f"dtype {dtype!r} is not one of {', '.join(DTYPE_NAMES)}")
    return DTYPE_NAMES[name]
