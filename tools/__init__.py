"""The maintainers' tools of the series, one module per job, each run as ``python -m tools.<name>``
(the Makefile's targets do; ``make help`` lists them). What they share -- where the notebooks are,
reading and writing them, titles, tags, headings and asides -- is in :mod:`tools.nb`.

- ``tools.execute_notebooks``  re-execute notebooks in place, as nbval runs them      (make execute)
- ``tools.lessons``            lesson cells identical to helpers/; refuses to overwrite an edited cell (make lessons)
- ``tools.navigation``         contents page, previous/next cells, the README's table  (make navigation)
- ``tools.cell_metadata``      slide types and collapsed asides, from tags and headings (make metadata)
- ``tools.build_slides``       one reveal.js deck per notebook, offline               (make slides)
- ``tools.build_book``         the HTML book, offline                                 (make book)
- ``tools.repeat_check``       run notebooks N times, report what changed             (make repeat)
- ``tools.every_k``            every notebook at k = 1..8 stand-in devices, a table    (make every-k)
- ``tools.check_gpu_libraries`` resolve the CUDA libraries mxnet-cu112 needs; its GPU code (by hand)
- ``tools.gpu_probe``          on a GPU machine: can MXNet's code run on this GPU       (by hand)
- ``tools.web.assets``         the pinned browser assets of the decks and the book

``tools`` may import ``helpers``; ``helpers`` never imports ``tools`` (tests/test_architecture.py).
"""
