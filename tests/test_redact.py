"""Redaction of credentials in the shapes raw log text holds them (tokaudit.redact)."""

from __future__ import annotations

import pytest

from tokaudit.ingest.base import result_features
from tokaudit.redact import redact

KEY = "sk-ant-api03-H3M1XS0DRdJuPnBIKpi99lSi0tcL21pffWQJEeNajnez0LHtfROUrWW6XAA"


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        (r"line1\n" + KEY, "H3M1XS0D"),  # right after a JSON escape: a letter before it in the raw text
        (r"x\nghp_abcdefghijklmnop12345", "abcdefghijklmnop"),
        (r"\nAKIAABCDEFGHIJKLMNOP", "ABCDEFGHIJKLMNOP"),
        (r'{\"api_key\": \"40abcdef123456\"}', "40abcdef"),  # JSON inside a JSON string
        ("-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAabc\n-----END RSA PRIVATE KEY-----", "MIIEow"),
        ("-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA", "b3BlbnNz"),  # cut before its end
        ("aws_secret_access_key = wJalrXUtnFEMI/K7MDENG", "wJalrXUt"),
        ("sk_live_51H8abcdefghijklmnop", "51H8abcd"),
        ("postgres://admin:hunter2pass@db.internal:5432/app", "hunter2"),
        ("url?token%3D" + KEY, "H3M1XS0D"),
        ('{"x":"Authorization:Bearer%20eyJhbGciOiJIUzI1NiJ9.X0a2dXich"}', "eyJhbGci"),  # the space URL-encoded
        ("Authorization=Bearer+eyJhbGciOiJIUzI1NiJ9.X0a2dXich", "eyJhbGci"),
        # A key name that starts with another pattern's literal ("bearer"): both patterns still run.
        ('{"bearer_token": "qwertyuiop123"}', "qwertyuiop"),
        ("bearer-token=qwertyuiop123 and Bearer zxcvbnmasdfg", "qwertyuiop"),
    ],
)
def test_credentials_in_raw_log_text_are_redacted(text, secret):
    assert secret not in redact(text)


@pytest.mark.parametrize("text", ["task-abcdefghijklmnop and disk-usage-reporting", "https://example.com:8080/a?page=2", "user@example.com",
                                  "the bearer bonds were redeemed"])
def test_ordinary_text_is_left_alone(text):
    assert redact(text) == text


def test_a_tail_excerpt_starting_inside_a_key_drops_what_is_left_of_it():
    # The tail is cut 120 characters from the end: inside the key, after the "sk-ant-" that marks it.
    data = ("word " * 200 + "token " + KEY + "x" * 60).encode()
    assert "WW6XAA" not in result_features(data)["result_excerpt"]


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        ("token eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U", "eyJzdWIi"),
        ("GITLAB=glpat-Ab3dEf6hIj9kLm2nOp5q", "Ab3dEf6h"),
        ("hf_abcdefghijklmnopqrstuvwxyzABCDEFGH", "abcdefghijkl"),
        ("//registry.npmjs.org/:_authToken npm_abcdefghijklmnopqrstuvwxyz0123456789", "abcdefghijkl"),
        ("password: pypi-AgEIcHlwaS5vcmcCJDAwMDAwMDAwLTAwMDAtMDAwMC0wMDAwLTAw", "cHlwaS5vcmc"),
        ("ya29.a0AfH6SMBabcdefghijklmnopqrstu", "a0AfH6SM"),
        ("curl https://hooks.slack.com/services/T0001/B0001/XXXXXXXXXXXXXXXX", "XXXXXXXX"),
        ('{\\"Authorization\\": \\"Basic dXNlcjpwYXNzd29yZA==\\"}', "dXNlcjpw"),
        ('{"refresh_token": "1//0gAbCdEfGhIj"}', "0gAbCdEf"),
        ('{"client_credentials": "s3cr3tvalue"}', "s3cr3tv"),
    ],
)
def test_bare_credentials_are_redacted_by_their_shape(text, secret):
    assert secret not in redact(text)


@pytest.mark.parametrize("text", ['{"max_tokens": 4096, "output_tokens": 12}', "the private key was rotated yesterday",
                                  "credential helper: osxkeychain", "self.hf_model = load()", "eyJ alone is not a token"])
def test_words_near_credential_names_are_left_alone(text):
    assert redact(text) == text
