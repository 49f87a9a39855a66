"""A small set of tools, shipped so `python -m funccall` has something to show.

    python -m funccall                       # the schemas of these tools
    python -m funccall schema funccall.example:book_meeting
"""
from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Literal

__all__ = ['Person', 'get_weather', 'add_note', 'book_meeting']

@dataclass
class Person:
    "Someone who can be invited to a meeting"
    name: str  # Full name
    email: str  # Where the invitation goes
    optional: bool = False  # Whether they may skip it

def get_weather(
    city: str,  # City name, e.g. 'Lisbon'
    unit: Literal['C', 'F'] = 'C',  # Temperature unit
) -> dict:  # Temperature and conditions
    "Current weather in `city`."
    return {'city': city, 'temperature': 21 if unit == 'C' else 70, 'unit': unit, 'conditions': 'sunny'}

def add_note(
    title: str,  # A short title
    body: str = '',  # The note itself, in Markdown
    tags: list[str] | None = None,  # Labels to find the note by
) -> str:  # The new note's id
    "Save a note for later."
    return f"note-{abs(hash((title, body))) % 10_000:04d}"

def book_meeting(
    title: str,  # What the meeting is about
    start: dt.datetime,  # When it starts (ISO 8601)
    attendees: list[Person],  # Who to invite
    minutes: int = 30,  # How long it lasts
) -> str:  # A confirmation message
    "Book a meeting and invite `attendees`."
    names = ', '.join(p.name for p in attendees)
    return f"Booked {title!r} at {start:%Y-%m-%d %H:%M} for {minutes} min with {names}"
