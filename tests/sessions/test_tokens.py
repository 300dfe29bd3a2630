import subprocess
import sys

from sessions.accounting import tokens


def test_counts_with_the_deepseek_vocabulary() -> None:
    assert tokens.count("") == 0
    assert tokens.count("hello world") == 2
    assert tokens.count_many(["hello world", ""]) == [2, 0]
    ids = tokens.encode("def main():\n    return 42\n")
    assert tokens.tokenizer().decode(ids) == "def main():\n    return 42\n"


def test_importing_the_module_does_not_load_the_vocabulary() -> None:
    code = "import sys, sessions.accounting.tokens; print('tokenizers' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"
