"""How a training configuration's keys are laid out: the common settings, and the run's method's
settings in a section named after it (``langmarl:``, ``maskills:``, ``mymethod:``).

The section is the one way to write a method's setting::

    critic_mode: counterfactual          # deprecated: a flat method setting (warns)
    langmarl:
      critic_mode: counterfactual        # the one way

A flat key still works for one release: it is moved into the run's method's section with a
:class:`DeprecationWarning` naming the sectioned key (``langmarl.critic_mode``); a flat key of
another method that holds its default is dropped with the same warning (one that does not is
refused: the run would not use it). ``lang-pz train`` says the same once per key.
"""

from __future__ import annotations

import difflib
import importlib
import warnings
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError
from pydantic_core import InitErrorDetails, PydanticCustomError

from lang_pz._moved import caller_stacklevel
from lang_pz.training.registry import sections
from lang_pz.training.sections import _HINTS

__all__ = ["flat_key_note", "flat_method_keys", "import_modules", "split_sections"]

M = TypeVar("M", bound=BaseModel)


def flat_method_keys(data: Mapping[str, Any], common: Mapping[str, Any]) -> dict[str, str]:
    """The keys of ``data`` that are a method's setting given flat -> that method (the run's
    method, ``data["method"]``, first; ``common``: the common settings' names, never a method's)."""
    method = data.get("method", "langmarl")
    out: dict[str, str] = {}
    for name, model in sorted(sections().items(), key=lambda item: item[0] != method):
        for key in data:
            if key in model.model_fields and key not in common:
                out.setdefault(key, name)
    return out


def flat_key_note(key: str, method: str, run_method: str) -> str:
    """What a flat method setting is told (the DeprecationWarning's text, and ``lang-pz train``'s note)."""
    if method != run_method:
        return (
            f"{key!r} is a setting of method {method!r} given flat, and this run's method is {run_method!r}: "
            f"it is ignored; drop it (flat method settings are deprecated)"
        )
    return (
        f"{key!r} is a setting of method {method!r} given flat: write it in the {method} section "
        f"({method}.{key}; on the command line --set {method}.{key}=...); flat method settings are "
        "deprecated and go in the next release"
    )


def _warn(keys: Mapping[str, str], run_method: str) -> None:
    level = caller_stacklevel()  # the line that built the config, outside lang_pz and pydantic
    for key, method in keys.items():
        warnings.warn(flat_key_note(key, method, run_method), DeprecationWarning, stacklevel=level)


def split_sections(cls: type[M], data: Any, handler: Callable[[Any], M]) -> M:
    """``TrainConfig``'s wrap validator: the run's method's settings are its section, checked by its
    settings model; a setting given flat is moved there (a DeprecationWarning), and one of another
    method is refused unless it holds that setting's default (nothing is carried; the same warning).
    ``imports`` are imported first (they may register the method)."""
    if not isinstance(data, dict):
        return handler(data)
    data = dict(data)
    import_modules(data.get("imports"))
    method, own = data.get("method", "langmarl"), {}
    flat = flat_method_keys(data, cls.model_fields)
    for name, model in sorted(sections().items(), key=lambda item: item[0] != method):  # flat keys: the run's first
        section = data.pop(name, None)
        moved = {k: data.pop(k) for k in list(data) if k in model.model_fields and k not in cls.model_fields}
        if name != method:
            carried = sorted(k for k, v in moved.items() if v != _default(model, k))
            if section is not None or carried:
                what = f"{carried[0]}={moved[carried[0]]!r}" if carried else f"the {name} section"
                key = f"{name}.{carried[0]}" if carried else name
                hint = f": {_HINTS[carried[0]]}" if carried and carried[0] in _HINTS else ""
                raise ValueError(
                    f"{what} is a setting of method {name!r} ({key}{hint}), and this run's method "
                    f"is {method!r}: set method={name} (lang-pz train --method {name}) or drop it"
                )
            continue
        if section is not None and not isinstance(section, dict | BaseModel):
            own[name] = section  # its model reports the type
            continue
        given = section.model_dump(exclude_unset=True) if isinstance(section, BaseModel) else dict(section or {})
        both = sorted(set(given) & set(moved))
        if both:
            pairs = ", ".join(f"{k!r} and '{name}.{k}'" for k in both)
            raise ValueError(
                f"{pairs} are both given (flat and in the {name} section); give each once: keep "
                f"{name}.{both[0]} and drop the flat {both[0]!r} (or the reverse)"
            )
        own[name] = {**given, **moved}
    if flat:
        _warn(flat, method)
    return _validated(cls, handler, data, own)


def _default(model: type[BaseModel], name: str) -> Any:
    f = model.model_fields[name]
    return f.default_factory() if f.default_factory is not None else f.default  # type: ignore[call-arg]


def _validated(cls: type[M], handler: Callable[[Any], M], data: dict[str, Any], own: dict[str, Any]) -> M:
    """``handler(data)`` with the method's section (``own``: name -> raw settings) checked by its
    model and added; every problem of both in one ``ValidationError`` (a section's located under
    its name), and any other key refused as pydantic refuses an unknown field."""
    errors: list[Any] = []
    out: M | None = None
    try:
        out = handler(data)
    except ValidationError as exc:
        errors += exc.errors(include_url=False)
    checked = {}
    models = sections()
    for name, raw in own.items():
        try:
            checked[name] = models[name].model_validate(raw)
        except ValidationError as exc:
            errors += [{**e, "loc": (name, *e["loc"])} for e in exc.errors(include_url=False)]
    extra = {k: v for k, v in data.items() if k not in cls.model_fields}
    errors += [
        {"type": "extra_forbidden", "loc": (k,), "msg": "Extra inputs are not permitted", "input": v}
        for k, v in extra.items()
    ]
    if errors:
        details = [
            InitErrorDetails(type=PydanticCustomError(e["type"], _hinted(e, cls, models)), loc=e["loc"], input=e["input"])
            for e in errors
        ]
        raise ValidationError.from_exception_data(cls.__name__, details)
    assert out is not None and out.__pydantic_extra__ is not None
    out.__pydantic_extra__.update(checked)
    return out


def _hinted(error: Any, cls: type[BaseModel], models: dict[str, type[BaseModel]]) -> str:
    """An unknown key's message with the closest known key of its level ("did you mean"); other
    messages as they are."""
    loc, msg = tuple(error["loc"]), str(error["msg"])
    if error["type"] != "extra_forbidden" or not loc:
        return msg
    if len(loc) == 1:
        known = [*cls.model_fields, *models]
    elif len(loc) == 2 and loc[0] in models:
        known = list(models[loc[0]].model_fields)
    else:
        return msg
    close = difflib.get_close_matches(str(loc[-1]), known, n=1)
    return f"{msg}; did you mean {close[0]!r}?" if close else msg


def import_modules(modules: Any) -> None:
    """Import a config's ``imports`` (modules that register methods or critic modes).

    Raises:
        ValueError: one cannot be imported (the message names it and why).
    """
    for name in modules if isinstance(modules, list) else []:
        try:
            importlib.import_module(str(name))
        except ImportError as exc:
            raise ValueError(
                f"imports: cannot import {name!r} ({exc}); give a module on the Python path "
                "(PYTHONPATH=. for a file of the current folder)"
            ) from None
