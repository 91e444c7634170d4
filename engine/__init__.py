"""The rules engine: pure (no I/O, clock or global random), typed, and compiled by mypyc
where a C compiler is (engine/compiled.py, the solver's engine/solver/loading.py)."""

from engine.compiled import choose_form

# Decided before any module of the package loads: "compiled" (the mypyc build of the
# rules engine, engine/compiled.py), or "pure: " and why the source runs instead.
ENGINE_FORM: str = choose_form(__name__)
