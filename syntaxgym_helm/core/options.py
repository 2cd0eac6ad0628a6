"""Typed option objects: a frozen, keyword-only dataclass whose fields are the options.

An option object says once what each option is (its annotation: ``Literal`` for a closed choice,
``int``, ``float``, ``bool``, ``str``, ``X | None``, a mapping), its default and its help text
(:func:`option`). From that one declaration:

- :func:`check_fields` (called by the object's ``__post_init__``) checks every value against its
  annotation, for callers that pass Python values (the Python API, a model deployment's YAML);
- :func:`options_from` builds the object from the strings a HELM run entry gives (or from values
  recorded in a ``run_spec.json``), converting each by its annotation;
- :func:`check_value` checks one argument that is not an option (the Python API's ``max_items``).

Every error names the argument, the value given and what it takes (:class:`OptionError`; a
:class:`OptionTypeError` for a value of the wrong type, which is also a ``TypeError``).
"""

from __future__ import annotations

import dataclasses
import types
from collections.abc import Mapping
from typing import Any, Literal, Union, get_args, get_origin, get_type_hints

_TRUE = ("true", "yes", "on", "1")
_FALSE = ("false", "no", "off", "0")


class OptionError(ValueError):
    """An option's value is not one it takes; the message names the option and what it takes."""


class OptionTypeError(OptionError, TypeError):
    """An option's value has the wrong type (``max_items="3"``, ``max_items=2.5``)."""


def option(default: Any, help: str, *, minimum: float | None = None, **meta: Any) -> Any:
    """A field of an option object: its default, its help text (docs, ``--help``) and, for a
    number, the smallest value it takes; ``meta`` holds what the object's own code reads."""
    return dataclasses.field(default=default,
                             metadata={"help": help, "minimum": minimum, **meta})


def describe(annotation: Any) -> str:
    """What an annotation takes, in words: ``one of error, exclude``, ``a whole number``."""
    origin, args = get_origin(annotation), get_args(annotation)
    if origin is Literal:
        return "one of " + ", ".join(str(choice) for choice in args)
    if origin in (Union, types.UnionType):
        return " or ".join(describe(arg) for arg in args)
    return {int: "a whole number", float: "a number", bool: "true or false", str: "a text",
            type(None): "None"}.get(annotation, "a mapping" if _is_mapping(annotation)
                                    else getattr(annotation, "__name__", str(annotation)))


def _is_mapping(annotation: Any) -> bool:
    origin = get_origin(annotation) or annotation
    return isinstance(origin, type) and issubclass(origin, Mapping)


def _fits(value: Any, annotation: Any) -> bool:
    origin, args = get_origin(annotation), get_args(annotation)
    if annotation is Any:
        return True
    if origin is Literal:
        return any(value == choice and type(value) is type(choice) for choice in args)
    if origin in (Union, types.UnionType):
        return any(_fits(value, arg) for arg in args)
    if annotation is type(None):
        return value is None
    if annotation is float:
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if annotation is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if _is_mapping(annotation):
        return isinstance(value, Mapping)
    return isinstance(value, annotation)


def choices_of(annotation: Any) -> tuple[Any, ...]:
    """The choices of a ``Literal`` annotation (also inside ``X | None``); () for others."""
    if get_origin(annotation) is Literal:
        return get_args(annotation)
    if get_origin(annotation) in (Union, types.UnionType):
        return tuple(c for arg in get_args(annotation) for c in choices_of(arg))
    return ()


def check_value(name: str, value: Any, annotation: Any, minimum: float | None = None) -> Any:
    """``value`` when it fits ``annotation`` (and is at least ``minimum``); else an
    :class:`OptionError` naming ``name``, the value and what it takes."""
    if not _fits(value, annotation):
        choices = choices_of(annotation)
        if choices and isinstance(value, str):
            raise OptionError(f"{name}={value!r} is not {describe(annotation)}")
        raise OptionTypeError(f"{name}={value!r} ({type(value).__name__}) is not "
                              f"{describe(annotation)}")
    if minimum is not None and isinstance(value, (int, float)) and value < minimum:
        what = "negative" if minimum == 0 else "too small"
        raise OptionError(f"{name}={value!r} is {what}: it takes {minimum:g} or more")
    return value


def parse_value(name: str, text: str, annotation: Any, default: Any = None) -> Any:
    """The value a string stands for under ``annotation`` (a run entry's ``first_token=exclude``,
    ``context_sentences=6``; ``""`` is None where None is allowed)."""
    origin, args = get_origin(annotation), get_args(annotation)
    if origin in (Union, types.UnionType):
        if text == "" and type(None) in args:
            return None
        others = [arg for arg in args if arg is not type(None)]
        if len(others) == 1:
            return parse_value(name, text, others[0], default)
        return text
    stripped = text.strip()
    if annotation is int or annotation is float:
        try:
            return annotation(stripped)
        except ValueError:
            example = default if default is not None else 0
            raise OptionError(f"{name}={text!r} is not {describe(annotation)} (e.g. "
                              f"{name}={example})") from None
    if annotation is bool:
        if stripped.lower() in _TRUE + _FALSE:
            return stripped.lower() in _TRUE
        raise OptionError(f"{name}={text!r} is not true or false")
    if origin is Literal:
        return stripped
    return text


def _hints(cls: type) -> dict[str, Any]:
    return get_type_hints(cls, include_extras=False)


def check_fields(instance: Any) -> None:
    """Check every field of an option object against its annotation and minimum."""
    hints = _hints(type(instance))
    for field in dataclasses.fields(instance):
        check_value(field.name, getattr(instance, field.name), hints[field.name],
                    field.metadata.get("minimum"))


def option_names(cls: type) -> tuple[str, ...]:
    return tuple(field.name for field in dataclasses.fields(cls))


def options_from(cls: type, values: Mapping[str, Any], where: str = "") -> Any:
    """An option object from ``values``: strings (a run entry, a YAML string) are converted by
    each field's annotation, other values are checked as given. An unknown name is an
    :class:`OptionError` listing the options; ``where`` begins each message."""
    hints = _hints(cls)
    fields = {field.name: field for field in dataclasses.fields(cls)}
    unknown = sorted(set(values) - set(fields))
    if unknown:
        raise OptionError(f"{where}unknown argument{'s' if len(unknown) > 1 else ''} "
                          f"{', '.join(unknown)}; the options are: {', '.join(fields)}")
    converted = {}
    for name, value in values.items():
        annotation = hints[name]
        try:
            if isinstance(value, str) and not _fits(value, annotation):
                value = parse_value(name, value, annotation, fields[name].default)
            converted[name] = value
        except OptionError as error:
            raise type(error)(f"{where}{error}") from None
    try:
        return cls(**converted)
    except OptionError as error:
        raise type(error)(f"{where}{error}") from None


def changed_fields(instance: Any) -> dict[str, Any]:
    """The fields whose values are not their defaults, in declaration order."""
    return {field.name: getattr(instance, field.name) for field in dataclasses.fields(instance)
            if getattr(instance, field.name) != field.default}
