"""The tools that find things in a workspace: list_dir, glob and grep, with the listing they share: the
workspace as git sees it (``.gitignore`` honoured), through ripgrep where it is installed and a walk of the tree where
it is not. Results come in sorted order, so the same workspace gives the same bytes.
"""

from sessions.tools.search.ripgrep import find_rg

__all__ = [
    "find_rg",
]
