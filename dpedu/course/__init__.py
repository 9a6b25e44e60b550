"""The course machinery: what the chapters and the instructor kit use, apart from the textbook.

- :mod:`~dpedu.course.notebook` - fast mode, ``pick``, progress bars, ``show_source`` (the printed textbook code)
- :mod:`~dpedu.course.checks` - the checks of the exercises (``checks.check_L2_clip(my_L2_clip)``), the guard that
  makes dpedu's own counterpart refuse while a check runs, and the hints in levels (``checks.hint("2.2")``)
- :mod:`~dpedu.course.exercises` - the list of exercises, their answers and tags
- :mod:`~dpedu.course.listing` - code listings of a chapter
- :mod:`~dpedu.course.instructor` - the nbgrader course kit, autograding and feedback
- :mod:`~dpedu.course.booklinks` - links from a notebook to the API reference and the notes, wherever it is opened
- :mod:`~dpedu.course.reference` - the folder ``reference/`` beside the notebooks: the notes and API pages they link
  to; where the chapters and notes are (a clone, or the copies a wheel ships)
- :mod:`~dpedu.course.feedback` - a feedback page carries the sections its links point at

Nothing in the textbook (``dpedu.textbook.clipping``, ``dpedu.textbook.models``, ``dpedu.textbook.training``, ``dpedu.accountants``, ...)
imports from here.
"""
