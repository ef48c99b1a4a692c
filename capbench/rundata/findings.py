"""What a bench kind found beyond its capacities: each kind declares a dataclass of these (kinds/<kind>.py,
Kind.findings), its run fills it in, summary.json carries it under the kind's name, and its report section and
console read it back as that type. Fields are declared with rundata.records.doc(), so the record reference
(docs/reference/records.md) gives each one's meaning."""
from __future__ import annotations

import dataclasses
import types
import typing
from typing import Any, ClassVar

_NONE = type(None)


def _decode(hint: Any, value: Any) -> Any:
    """A JSON value as the type a field declares: dataclasses (nested at any depth in lists, dicts and
    optionals) are rebuilt, everything else is taken as written."""
    if value is None:
        return None
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin in (typing.Union, types.UnionType):
        inner = [a for a in args if a is not _NONE]
        return _decode(inner[0], value) if len(inner) == 1 else value
    if origin is list and args:
        return [_decode(args[0], v) for v in value]
    if origin is dict and len(args) == 2:
        return {k: _decode(args[1], v) for k, v in value.items()}
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        return from_json(hint, value)
    return value


def from_json(cls: type, data: dict | None):
    """A record of dataclass `cls` from its JSON object: fields it lacks take their defaults (a record
    written before the field existed), entries it no longer names are dropped."""
    hints = typing.get_type_hints(cls)
    data = data or {}
    return cls(**{f.name: _decode(hints[f.name], data[f.name]) for f in dataclasses.fields(cls)
                  if f.init and f.name in data})


class Findings:
    """The base of a kind's findings dataclass. `kind` is the key it is written under in summary.json (the
    kind's name); a kind whose figures once sat elsewhere in summary.json says where in `earlier`."""
    kind: ClassVar[str] = ""

    def to_json(self) -> dict:
        return dataclasses.asdict(self)  # type: ignore[call-overload]

    @classmethod
    def from_json(cls, data: dict | None):
        return from_json(cls, data)

    def update(self, data: dict) -> None:
        """Sets the fields `data` names (a JSON object, decoded as from_json does); it must name no other."""
        hints = typing.get_type_hints(type(self))
        for name, value in data.items():
            if name not in hints or name == "kind":
                raise KeyError(f"{type(self).__name__} has no field '{name}'")
            setattr(self, name, _decode(hints[name], value))

    @classmethod
    def earlier(cls, summary: dict) -> dict | None:
        """Its entries from a summary.json written before it had a section of its own; None for any other."""
        return None

    @classmethod
    def in_summary(cls, summary: dict):
        """The record read from summary.json (a dict as written): under its kind's name, or where an earlier
        version wrote it; an empty record when the run found nothing."""
        earlier = cls.earlier(summary)
        return cls.from_json(earlier if earlier is not None else summary.get(cls.kind))
