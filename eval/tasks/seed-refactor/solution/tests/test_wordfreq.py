from report import format_report
from wordfreq import top_words, word_count, words


def test_words_lowercases_and_strips_quotes():
    assert words("The 'cat' isn't HERE") == ["the", "cat", "isn't", "here"]


def test_word_count():
    assert word_count("one two  three\nfour") == 4
    assert word_count("") == 0


def test_top_words_orders_by_count_then_name():
    assert top_words("b a b c a b", 2) == [("b", 3), ("a", 2)]
    assert top_words("z y x", 3) == [("x", 1), ("y", 1), ("z", 1)]


def test_format_report():
    assert format_report("b a b", 2) == "3 words\nb            2\na            1"
