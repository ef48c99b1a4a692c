"""How a bench setting is declared and read. A settings class is a frozen dataclass whose fields are declared with
setting(): the key a user sets (`make bench-cluster STEP_S=10`), its default, its rule and one line of help. One
reader fills any such class from the environment, checks every value and collects every problem, so a user sees
them all at once, each as one line naming the key and what is allowed. docs/reference/settings.md is generated
from these declarations."""
from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass
from typing import Any, Callable

from capbench.hosts import topology


class SettingsError(ValueError):
    """Raised with every problem found, one per line."""


@dataclass(frozen=True)
class Rule:
    """What a value may be: `allowed` says it to the user, `parse` turns the text into the value or raises
    ValueError. `described` is that text, or what gives it when asked (a rule whose choices are the bench's
    topology, known only when the command runs)."""
    described: str | Callable[[], str]
    parse: Callable[[str], Any]

    @property
    def allowed(self) -> str:
        return self.described() if callable(self.described) else self.described


@dataclass(frozen=True)
class Setting:
    key: str
    default: str
    rule: Rule
    help: str
    # QUICK=1 reads QUICK_<key> instead, whose default this is (None: the key reads the same under QUICK).
    quick: str | None = None

    @property
    def quick_key(self) -> str:
        return f"QUICK_{self.key}"


def setting(key: str, default: str, rule: Rule, help: str, quick: str | None = None) -> Any:
    """A settings class's field: read from `key` (QUICK_<key> under QUICK=1 when `quick` gives its default)."""
    return dataclasses.field(metadata={"setting": Setting(key, default, rule, help, quick)})


def nested(cls: type) -> Any:
    """A field holding a settings class of its own (the SLO, the query), read with the rest."""
    return dataclasses.field(metadata={"nested": cls})


def declared(cls: type) -> list[Setting]:
    """Every setting the class reads, nested ones included, in the order of its fields."""
    found = []
    for f in dataclasses.fields(cls):
        if "setting" in f.metadata:
            found.append(f.metadata["setting"])
        elif "nested" in f.metadata:
            found.extend(declared(f.metadata["nested"]))
    return found


def defaults(cls: type) -> dict[str, str]:
    """Each key the class reads, QUICK_ twins included, with its default."""
    values = {}
    for s in declared(cls):
        values[s.key] = s.default
        if s.quick is not None:
            values[s.quick_key] = s.quick
    return values


def read(cls: type, raw: dict[str, str], quick: bool, errors: list[str]) -> Any:
    """An instance of the settings class from the raw values (every key present, see defaults()); a value that
    breaks its rule adds a line to `errors` and leaves the field None."""
    values = {}
    for f in dataclasses.fields(cls):
        if "nested" in f.metadata:
            values[f.name] = read(f.metadata["nested"], raw, quick, errors)
        elif "setting" in f.metadata:
            s = f.metadata["setting"]
            key = s.quick_key if quick and s.quick is not None else s.key
            text = raw.get(key, "")
            try:
                values[f.name] = s.rule.parse(text)
            except ValueError:
                errors.append(f"{key}='{text}' is not allowed: use {s.rule.allowed}")
                values[f.name] = None
    return cls(**values)


def integer(low: int, high: int) -> Rule:
    def parse(text: str) -> int:
        if re.fullmatch(r"0|[1-9][0-9]{0,8}", text) and low <= int(text) <= high:
            return int(text)
        raise ValueError(text)
    return Rule(f"an integer from {low} to {high}", parse)


def number(low: float, high: float, low_open: bool = False, high_open: bool = False) -> Rule:
    def parse(text: str) -> float:
        value = float(text) if re.fullmatch(r"[0-9]{1,9}(\.[0-9]+)?", text) else None
        if value is None or (value <= low if low_open else value < low) or (value >= high if high_open else
                                                                            value > high):
            raise ValueError(text)
        return value
    bound = f"above {low:.10g}" if low_open else f"from {low:.10g}"
    return Rule(f"a number {bound} to {'below ' if high_open else ''}{high:.10g}", parse)


def auto_or(rule: Rule) -> Rule:
    """'auto' (read as None: the harness chooses) or what `rule` allows."""
    return Rule(f"auto or {rule.allowed}", lambda text: None if text == "auto" else rule.parse(text))


def choice(choices: tuple[str, ...]) -> Rule:
    def parse(text: str) -> str:
        if text not in choices:
            raise ValueError(text)
        return text
    return Rule("one of " + ", ".join(choices), parse)


def node_choice(also: tuple[str, ...] = ()) -> Rule:
    """One of `also` or a node of the bench (its topology's, read when a value is checked, not at import)."""
    def allowed() -> tuple[str, ...]:
        return (*also, *topology.NODES)

    def parse(text: str) -> str:
        if text not in allowed():
            raise ValueError(text)
        return text
    return Rule(lambda: "one of " + ", ".join(allowed()), parse)


def switch(words: tuple[str, str], on: str) -> Rule:
    """One of two words, read as True when it is `on`."""
    def parse(text: str) -> bool:
        if text not in words:
            raise ValueError(text)
        return text == on
    return Rule("one of " + ", ".join(words), parse)


def choices(allowed: tuple[str, ...]) -> Rule:
    """Space-separated, each one of `allowed`, none twice, at least one."""
    def parse(text: str) -> tuple[str, ...]:
        values = tuple(text.split())
        if not values or len(set(values)) != len(values) or any(v not in allowed for v in values):
            raise ValueError(text)
        return values
    return Rule("one or more of " + ", ".join(allowed) + ", space-separated, each once", parse)


def levels(minimum: int, high: int) -> Rule:
    """Space-separated integers from 1 to high, rising, at least `minimum` of them."""
    def parse(text: str) -> tuple[int, ...]:
        values = tuple(int(v) for v in text.split()) if re.fullmatch(
            r"[1-9][0-9]{0,8}( +[1-9][0-9]{0,8})*", text) else ()
        if len(values) < minimum or any(b <= a for a, b in zip(values, values[1:])) or values[-1] > high:
            raise ValueError(text)
        return values
    return Rule(f"at least {minimum} rising integers from 1 to {high}, space-separated (e.g. '1 2 4 8 16 32')", parse)


def sizes(high: int) -> Rule:
    """Space-separated integers from 0 to high, rising, at least one."""
    def parse(text: str) -> tuple[int, ...]:
        values = tuple(int(v) for v in text.split()) if re.fullmatch(r"[0-9]{1,9}( +[0-9]{1,9})*", text) else ()
        if not values or any(b <= a for a, b in zip(values, values[1:])) or values[-1] > high:
            raise ValueError(text)
        return values
    return Rule(f"one or more rising integers from 0 to {high}, space-separated (e.g. '0 16 32 64')", parse)


def file_path() -> Rule:
    """Empty, or a file's path as given (relative ones from where make runs: the checkout); what the file must hold
    is checked where it is read."""
    return Rule("empty, or the path of a file (relative to the checkout)", lambda value: value)
