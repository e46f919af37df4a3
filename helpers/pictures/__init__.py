"""Pictures and measurements for the chapters; nothing here is part of the model.

- :mod:`~helpers.pictures.plotting`: attention heat maps, positional encodings, loss curves;
- :mod:`~helpers.pictures.diagrams`: the paper's figures drawn from a live model;
- :mod:`~helpers.pictures.tracing`: every tensor's shape in a pass, a translation's attention;
- :mod:`~helpers.pictures.printing`: vectors and differences as rounded text;
- :mod:`~helpers.pictures.timing`: the best of several timings.

The plots use a CJK font, so Chinese tokens render. The model's modules never import this
package; it imports them (inside the functions that draw them, so it loads while an exercise
is graded). A grading kernel has no pictures: this package is absent from its copy of
``helpers`` (``autograder/pieces.py``).
"""
