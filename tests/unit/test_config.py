"""The Temporal connection settings an operator of an existing cluster or Temporal Cloud sets."""

from __future__ import annotations

from pathlib import Path

import pytest
from temporalio.service import TLSConfig

from groundwork.config import Settings
from groundwork.platform.temporal.client import connect_config, tls_config

VARIABLES = (
    "TEMPORAL_ADDRESS",
    "TEMPORAL_NAMESPACE",
    "TEMPORAL_TLS",
    "TEMPORAL_TLS_CLIENT_CERT_PATH",
    "TEMPORAL_TLS_CLIENT_KEY_PATH",
    "TEMPORAL_TLS_SERVER_CA_CERT_PATH",
    "TEMPORAL_TLS_SERVER_NAME",
    "TEMPORAL_API_KEY",
    "TEMPORAL_CONFIG_FILE",
    "TEMPORAL_PROFILE",
)


@pytest.fixture(autouse=True)
def clean_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in VARIABLES:
        monkeypatch.delenv(name, raising=False)


def settings() -> Settings:
    return Settings.from_env("postgresql://db.example/groundwork")


@pytest.fixture
def pem_files(tmp_path: Path) -> dict[str, Path]:
    files = {}
    for name in ("client.pem", "client.key", "ca.pem"):
        files[name] = tmp_path / name
        files[name].write_bytes(f"-----BEGIN {name}-----\n".encode())
    return files


def test_without_tls_variables_the_connection_is_plaintext_as_for_the_dev_server() -> None:
    parsed = settings()
    assert (parsed.temporal_address, parsed.temporal_namespace) == ("127.0.0.1:7233", "default")
    assert parsed.temporal_api_key is None and parsed.temporal_tls is None
    assert tls_config(parsed) is False


def test_temporal_cloud_with_an_api_key_uses_tls_with_system_roots(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TEMPORAL_ADDRESS", "eu-west-1.aws.api.temporal.io:7233")
    monkeypatch.setenv("TEMPORAL_NAMESPACE", "groundwork-prod.a1b2c")
    monkeypatch.setenv("TEMPORAL_API_KEY", "tcapi-secret-value")
    parsed = settings()
    assert parsed.temporal_address == "eu-west-1.aws.api.temporal.io:7233"
    assert parsed.temporal_namespace == "groundwork-prod.a1b2c"
    assert parsed.temporal_api_key == "tcapi-secret-value"
    assert tls_config(parsed) is True
    # The key is a secret: printing the settings (a log line, a traceback) must not show it.
    assert "tcapi-secret-value" not in repr(parsed)


def test_mtls_client_certificate_key_ca_and_server_name_reach_the_tls_config(
    monkeypatch: pytest.MonkeyPatch, pem_files: dict[str, Path]
) -> None:
    monkeypatch.setenv("TEMPORAL_TLS_CLIENT_CERT_PATH", str(pem_files["client.pem"]))
    monkeypatch.setenv("TEMPORAL_TLS_CLIENT_KEY_PATH", str(pem_files["client.key"]))
    monkeypatch.setenv("TEMPORAL_TLS_SERVER_CA_CERT_PATH", str(pem_files["ca.pem"]))
    monkeypatch.setenv("TEMPORAL_TLS_SERVER_NAME", "temporal.internal.example")
    config = tls_config(settings())
    assert isinstance(config, TLSConfig)
    assert config.client_cert == b"-----BEGIN client.pem-----\n"
    assert config.client_private_key == b"-----BEGIN client.key-----\n"
    assert config.server_root_ca_cert == b"-----BEGIN ca.pem-----\n"
    assert config.domain == "temporal.internal.example"


@pytest.mark.parametrize(("value", "expected"), [("true", True), ("1", True), ("false", False), ("0", False)])
def test_temporal_tls_turns_tls_on_or_off_explicitly(
    monkeypatch: pytest.MonkeyPatch, value: str, expected: bool
) -> None:
    monkeypatch.setenv("TEMPORAL_TLS", value)
    monkeypatch.setenv("TEMPORAL_API_KEY", "k")  # alone it would turn TLS on; an explicit false wins
    assert tls_config(settings()) is expected


@pytest.mark.parametrize(
    ("variables", "message"),
    [
        ({"TEMPORAL_TLS": "sometimes"}, "TEMPORAL_TLS: expected true or false"),
        ({"TEMPORAL_TLS_CLIENT_CERT_PATH": "client.pem"}, "must be set together"),
        ({"TEMPORAL_TLS_CLIENT_KEY_PATH": "client.key"}, "must be set together"),
        ({"TEMPORAL_TLS_SERVER_CA_CERT_PATH": "missing.pem"}, "TEMPORAL_TLS_SERVER_CA_CERT_PATH: no such file"),
        ({"TEMPORAL_TLS": "false", "TEMPORAL_TLS_SERVER_CA_CERT_PATH": "ca.pem"}, "TEMPORAL_TLS is false"),
    ],
)
def test_inconsistent_or_missing_tls_settings_fail_at_start_up_naming_the_variable(
    monkeypatch: pytest.MonkeyPatch, pem_files: dict[str, Path], variables: dict[str, str], message: str
) -> None:
    directory = pem_files["ca.pem"].parent
    for name, value in variables.items():
        monkeypatch.setenv(name, value if name == "TEMPORAL_TLS" else str(directory / value))
    with pytest.raises(RuntimeError, match=message):
        settings()


@pytest.mark.parametrize(("value", "expected"), [("yes", True), ("on", True), ("no", False), ("off", False)])
def test_temporal_tls_keeps_its_yes_on_no_off_spellings_which_the_sdk_alone_reads_as_tls_on(
    monkeypatch: pytest.MonkeyPatch, value: str, expected: bool
) -> None:
    monkeypatch.setenv("TEMPORAL_TLS", value)
    monkeypatch.setenv("TEMPORAL_API_KEY", "k")
    assert tls_config(settings()) is expected


def test_a_temporal_configuration_file_does_not_redirect_the_connection(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    profile = tmp_path / "temporal.toml"
    profile.write_text('[profile.default]\naddress = "elsewhere.example:7233"\nnamespace = "other"\n')
    monkeypatch.setenv("TEMPORAL_CONFIG_FILE", str(profile))
    parsed = settings()
    assert (parsed.temporal_address, parsed.temporal_namespace) == ("127.0.0.1:7233", "default")


def test_the_connection_takes_address_namespace_key_and_tls_from_the_sdk_profile_of_the_settings(
    monkeypatch: pytest.MonkeyPatch, pem_files: dict[str, Path]
) -> None:
    monkeypatch.setenv("TEMPORAL_ADDRESS", "temporal.internal.example:7233")
    monkeypatch.setenv("TEMPORAL_NAMESPACE", "groundwork")
    monkeypatch.setenv("TEMPORAL_API_KEY", "k")
    monkeypatch.setenv("TEMPORAL_TLS_SERVER_CA_CERT_PATH", str(pem_files["ca.pem"]))
    config = connect_config(settings())
    assert (config["target_host"], config["namespace"], config["api_key"]) == (
        "temporal.internal.example:7233",
        "groundwork",
        "k",
    )
    assert isinstance(config["tls"], TLSConfig) and config["tls"].server_root_ca_cert == b"-----BEGIN ca.pem-----\n"


def test_an_empty_temporal_address_means_the_default_one(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TEMPORAL_ADDRESS", "")
    assert settings().temporal_address == "127.0.0.1:7233"
