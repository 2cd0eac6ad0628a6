"""syntaxgym-helm: SyntaxGym targeted syntactic evaluation as a HELM benchmark."""

__version__ = "0.1.0"
