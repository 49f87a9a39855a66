from __future__ import annotations

# Examples whose annotations are strings (`from __future__ import annotations`), for test_schema_types.py.
# Some refer to classes defined further down the module, so they only resolve when the schema is made.
import datetime as dt
from dataclasses import dataclass, field
from typing import Literal, NamedTuple, Optional, TypedDict

import typing_extensions as te
from pydantic import BaseModel


def uses_later(
    item: Later,  # the item
    items: list[Later] | None = None,  # more items
) -> Later:
    "Uses a class defined further down the module"


@dataclass
class Later:
    "Defined after the function that uses it"
    v: int  # vee
    when: Optional[dt.date] = None


@dataclass
class TreeNode:
    val: int  # node value
    children: list[TreeNode] = field(default_factory=list)  # child nodes


@dataclass
class Ping:
    pong: Optional[Pong] = None


@dataclass
class Pong:
    ping: Optional[Ping] = None


def ping_pong(p: Ping, q: Pong):
    "Mutually recursive classes"


class FutTD(TypedDict, total=False):
    a: int
    b: te.Required[str]


class FutTDe(te.TypedDict):
    a: int
    b: te.NotRequired[str]


class FutNT(NamedTuple):
    a: int  # the a
    later: Later | None = None


class FutModel(BaseModel):
    a: int  # model a
    later: Optional[Later] = None


def mixed(
    x: Literal['a', 'b'],
    y: dict[str, Later],
    z: tuple[int, str] = (1, 'a'),
    m: FutModel | None = None,
    n: FutNT | None = None,
):
    "String annotations of every shape"


def unresolvable(x: NotDefinedAnywhere):  # noqa: F821
    "Names a class that does not exist"
