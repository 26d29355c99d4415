import re


def words(text: str) -> list[str]:
    """Split text into lowercase words.

    Apostrophes stay inside words.
    """
    ‸

def other():
    """Other."""
    return 1
