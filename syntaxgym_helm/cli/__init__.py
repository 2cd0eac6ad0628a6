"""The ``syntaxgym-helm`` command line: :mod:`.main` dispatches, one module per subcommand."""
