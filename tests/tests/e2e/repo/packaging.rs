//! The container files: no Docker engine runs here, so what can be checked without one is:
//! the compose file and the LiteLLM config parse as YAML and say what they must, and the
//! Dockerfile's health check calls a subcommand the binary has (tested in
//! mock-upstream/tests/cli.rs).

use std::path::{Path, PathBuf};

use yaml_rust2::{Yaml, YamlLoader};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn yaml(path: &str) -> Yaml {
    let text = std::fs::read_to_string(repo().join(path)).unwrap();
    let mut docs = YamlLoader::load_from_str(&text).unwrap_or_else(|e| panic!("{path}: {e}"));
    assert_eq!(docs.len(), 1, "{path}");
    docs.remove(0)
}

#[test]
fn compose_runs_the_mock_as_a_healthy_sidecar_with_raised_file_limits() {
    let compose = yaml("scripts/docker/compose.yml");
    let services = &compose["services"];
    for name in ["mock", "litellm", "loadgen"] {
        assert!(!services[name].is_badvalue(), "no service {name}");
        let nofile = &services[name]["ulimits"]["nofile"];
        assert!(
            nofile["soft"].as_i64().unwrap_or(0) >= 65_536,
            "{name}: nofile {nofile:?}"
        );
    }
    let mock = &services["mock"];
    assert_eq!(mock["build"]["target"].as_str(), Some("mock"));
    // Configured by MOCK_* variables only.
    let env = mock["environment"].as_hash().unwrap();
    assert!(env
        .keys()
        .all(|k| k.as_str().is_some_and(|k| k.starts_with("MOCK_"))));
    assert_eq!(
        services["litellm"]["depends_on"]["mock"]["condition"].as_str(),
        Some("service_healthy")
    );
    let loadgen = &services["loadgen"];
    assert_eq!(loadgen["build"]["target"].as_str(), Some("loadgen"));
    let command: Vec<&str> = loadgen["command"]
        .as_vec()
        .unwrap()
        .iter()
        .filter_map(Yaml::as_str)
        .collect();
    assert_eq!(command[0], "overhead");
    assert!(command.contains(&"http://mock:8080/v1/chat/completions"));
    // The loadgen arguments are ones loadgen accepts.
    let mut argv = vec!["loadgen"];
    argv.extend(&command);
    let parsed = <loadgen::Cli as clap::Parser>::try_parse_from(argv);
    assert!(parsed.is_ok(), "{:?}", parsed.err());
}

#[test]
fn litellm_config_points_its_model_at_the_mock() {
    let config = yaml("scripts/docker/litellm.yaml");
    let model = &config["model_list"][0];
    assert_eq!(model["model_name"].as_str(), Some("gpt-4o-mini"));
    assert_eq!(
        model["litellm_params"]["api_base"].as_str(),
        Some("http://mock:8080/v1")
    );
}

#[test]
fn dockerfile_has_a_small_non_root_runtime_with_a_health_check() {
    let text = std::fs::read_to_string(repo().join("Dockerfile")).unwrap();
    let lines: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.starts_with('#'))
        .collect();
    let stages: Vec<&&str> = lines.iter().filter(|l| l.starts_with("FROM ")).collect();
    assert!(stages.len() >= 2, "multi-stage: {stages:?}");
    assert!(
        stages.last().unwrap().ends_with("AS mock"),
        "the mock is the default target"
    );
    assert!(lines.contains(&"USER nonroot"));
    assert!(lines.contains(&"EXPOSE 8080"));
    assert!(lines.contains(&"ENV MOCK_LISTEN=0.0.0.0:8080"));
    assert!(text.contains(r#"CMD ["/usr/local/bin/mock-upstream", "healthcheck"]"#));
    assert!(
        text.contains("--locked"),
        "built from the committed lockfile"
    );
}
