"""`python -m groundwork.cli`: the same command as the `groundwork` console script."""

from groundwork.cli import main

main()
