"""ClusterPlan's domain core: pure Python + numpy (+ pydantic at the input edge).

Nothing here imports Django, DRF, Celery or Plotly, so the CLI, a web view, a Celery
task or a notebook can all call it.
"""

ENGINE_VERSION = "2.86.0"
__version__ = ENGINE_VERSION
