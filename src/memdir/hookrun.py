"""The installed hook command: ``PYTHON -I -S -X utf8 …/memdir/hookrun.py EVENT [--host H]``.

``-I -S`` skip what start-up does not need (site-packages, ``.pth`` files, user site, the
environment's ``PYTHON*`` variables); this file puts the folder holding ``memdir`` on the path
(after the standard library) and hands over to :func:`memdir.hooks.launch.main`. Kept tiny: a
script is compiled on every run, a module's bytecode is cached.
"""

import sys

sys.path.append(__file__[: __file__.rindex("memdir") - 1])
from memdir.hooks.launch import main

main()
