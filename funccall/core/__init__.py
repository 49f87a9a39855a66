"""The three pillars and what they stand on: annotations classified (`_types`), descriptions read (`_docs`), schemas
written (`schema`) and rendered per provider (`providers`), calls resolved and coerced (`call`, `_ns`, `_coerce`), and
the inverse (`inverse`, with its JSON Schema validator `_jsonschema`). Provider-free, and importing nothing above it.

Empty on purpose: `funccall/__init__.py` is the public face; a child process (code mode's) imports single modules of
this package without loading the rest."""
