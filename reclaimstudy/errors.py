"""The one exception type the command line turns into a clean message."""


class StudyError(Exception):
    """A problem the user can fix: bad input, a missing tool, a failed build.

    The message must say what was wrong (the value) and what is allowed or
    how to fix it; the CLI prints it without a traceback.
    """
