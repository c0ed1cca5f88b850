"""Running the ``forksync`` CLI in-process from a test."""
from bot.cli.main import main


def run(capsys, argv):
    """``(exit status, stdout, stderr)`` of ``forksync argv`` in this process (``capsys``: pytest's)."""
    rc = main(argv)
    out = capsys.readouterr()
    return rc, out.out, out.err
