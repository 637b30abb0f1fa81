"""Numbers and lists from the command line: one line naming the value on error (exit status 2)."""
from .text import quoted


class InputError(Exception):
    """Bad input or a preflight failure: one line, exit status 2."""


def is_decimal(text):
    return isinstance(text, str) and text.isdigit()


def decimal_or_none(text):
    """The value of decimal text, None for anything else (environment values, daemon answers)."""
    return int(text) if is_decimal(text) else None


def integer(flag, text, low, high):
    """Decimal text in [low, high], else InputError naming flag and the value."""
    if not is_decimal(text):
        raise InputError(f"{flag}: {quoted(text)} is not a positive integer")
    value = int(text)
    if not low <= value <= high:
        raise InputError(f"{flag}: {value} is out of range [{low}, {high}]")
    return value


def items(flag, text):
    """The comma-separated items of text (ASCII spaces around them dropped); no empty item."""
    parts = [t.strip() for t in text.split(",")]
    if not text or any(not t for t in parts):
        raise InputError(f"{flag}: empty item in {quoted(text)}")
    return parts


def integer_list(flag, text, low, high):
    """Sorted distinct integers of a comma list."""
    return sorted({integer(flag, item, low, high) for item in items(flag, text)})


def choice_list(flag, text, choices):
    """Distinct items of a comma list, each one of choices, in the order given."""
    out = []
    for item in items(flag, text):
        if item not in choices:
            raise InputError(f"{flag}: unknown value {quoted(item)} (choose from {', '.join(choices)})")
        if item not in out:
            out.append(item)
    return out
