"""rubric-studio's test suite (a package, so that no installed distribution's top-level ``tests`` can shadow it)."""
