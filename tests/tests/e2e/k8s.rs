//! The Kubernetes manifests of `scripts/k8s/`: no cluster runs here, so what can be checked
//! without one is that they parse as YAML and hang together: the Job is Indexed with
//! completions = parallelism = N and passes its completion index as the shard, its arguments
//! are ones loadgen accepts, the profile it mounts makes a valid plan aimed at the Service, and
//! the Service selects the gateway's pods and names ports their containers open.

use std::path::{Path, PathBuf};

use clap::Parser as _;
use loadgen::{Cli, Command};
use yaml_rust2::{Yaml, YamlLoader};

fn k8s(file: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../scripts/k8s")
        .join(file)
}

fn docs(file: &str) -> Vec<Yaml> {
    let text = std::fs::read_to_string(k8s(file)).unwrap();
    YamlLoader::load_from_str(&text).unwrap_or_else(|e| panic!("{file}: {e}"))
}

fn kind<'a>(docs: &'a [Yaml], kind: &str) -> &'a Yaml {
    docs.iter()
        .find(|d| d["kind"].as_str() == Some(kind))
        .unwrap_or_else(|| panic!("no {kind}"))
}

fn strings(y: &Yaml) -> Vec<&str> {
    y.as_vec()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect()
}

#[test]
fn the_indexed_job_runs_one_shard_per_completion_index() {
    let job_docs = docs("loadgen-job.yaml");
    let job = kind(&job_docs, "Job");
    assert_eq!(job["apiVersion"].as_str(), Some("batch/v1"));
    let spec = &job["spec"];
    assert_eq!(spec["completionMode"].as_str(), Some("Indexed"));
    let n = spec["completions"].as_i64().unwrap();
    assert_eq!(spec["parallelism"].as_i64(), Some(n));
    assert_eq!(spec["backoffLimit"].as_i64(), Some(0));
    let pod = &spec["template"]["spec"];
    assert_eq!(pod["restartPolicy"].as_str(), Some("Never"));
    let container = &pod["containers"][0];
    let args = strings(&container["args"]);
    assert!(args.contains(&format!("--shard=$(JOB_COMPLETION_INDEX)/{n}").as_str()));
    assert!(args.contains(&"--start-at=$(START_AT)") && args.contains(&"--out=-"));
    let env = container["env"].as_vec().unwrap();
    let var = |name: &str| {
        env.iter()
            .find(|e| e["name"].as_str() == Some(name))
            .unwrap_or_else(|| panic!("no {name}"))
    };
    assert_eq!(
        var("JOB_COMPLETION_INDEX")["valueFrom"]["fieldRef"]["fieldPath"].as_str(),
        Some("metadata.annotations['batch.kubernetes.io/job-completion-index']")
    );
    assert_eq!(var("START_AT")["value"].as_str(), Some("__START_AT__"));

    // What Kubernetes would pass for index N-1, with run.sh's start instant: loadgen takes it.
    let at = humantime::format_rfc3339_seconds(
        std::time::SystemTime::now() + std::time::Duration::from_secs(60),
    )
    .to_string();
    let mut argv = vec!["loadgen".to_string()];
    argv.extend(args.iter().map(|a| {
        a.replace("$(JOB_COMPLETION_INDEX)", &(n - 1).to_string())
            .replace("$(START_AT)", &at)
    }));
    let cli = Cli::try_parse_from(&argv).unwrap_or_else(|e| panic!("{argv:?}: {e}"));
    let Command::Run(run) = cli.command else {
        panic!("not a run: {argv:?}")
    };
    assert_eq!(
        run.shard.as_deref(),
        Some(format!("{}/{n}", n - 1).as_str())
    );

    // The profile is the ConfigMap's, mounted where --profile reads it.
    let mount = &container["volumeMounts"][0];
    let volume = pod["volumes"]
        .as_vec()
        .unwrap()
        .iter()
        .find(|v| v["name"] == mount["name"])
        .unwrap();
    let profile_docs = docs("profile.yaml");
    let config_map = kind(&profile_docs, "ConfigMap");
    assert_eq!(
        volume["configMap"]["name"].as_str(),
        config_map["metadata"]["name"].as_str()
    );
    let file = run.profile.unwrap();
    assert_eq!(file.parent().unwrap().to_str(), mount["mountPath"].as_str());
    let name = file.file_name().unwrap().to_str().unwrap();
    assert!(
        !config_map["data"][name].is_badvalue(),
        "no {name} in the ConfigMap"
    );

    // run.sh sets N on exactly the lines marked `# shards`: both counts and the shard flag.
    let text = std::fs::read_to_string(k8s("loadgen-job.yaml")).unwrap();
    let marked: Vec<&str> = text.lines().filter(|l| l.ends_with("# shards")).collect();
    assert_eq!(marked.len(), 3, "{marked:?}");
    let script = std::fs::read_to_string(k8s("run.sh")).unwrap();
    assert!(script.contains("__START_AT__") && script.contains("# shards"));
}

#[test]
fn the_profile_makes_a_valid_sharded_plan_aimed_at_the_service() {
    let profile_docs = docs("profile.yaml");
    let profile = kind(&profile_docs, "ConfigMap")["data"]["run.toml"]
        .as_str()
        .unwrap()
        .to_string();
    let args: loadgen::RunArgs = toml::from_str(&profile).unwrap();
    assert!(
        args.shard.is_none() && args.start_at.is_none(),
        "set per pod"
    );
    let url = args.targets[0].clone();
    let gateway_docs = docs("gateway.yaml");
    let service = kind(&gateway_docs, "Service");
    let port = service["spec"]["ports"]
        .as_vec()
        .unwrap()
        .iter()
        .find(|p| p["name"].as_str() == Some("gateway"))
        .unwrap()["port"]
        .as_i64()
        .unwrap();
    let authority = format!("{}:{port}", service["metadata"]["name"].as_str().unwrap());
    assert!(url.starts_with(&format!("http://{authority}/")), "{url}");
    // The clock reference is the mock's port of the same Service.
    let mock_port = service["spec"]["ports"]
        .as_vec()
        .unwrap()
        .iter()
        .find(|p| p["name"].as_str() == Some("mock"))
        .unwrap()["port"]
        .as_i64()
        .unwrap();
    let service_name = service["metadata"]["name"].as_str().unwrap();
    let reference = format!("http://{service_name}:{mock_port}");
    assert_eq!(args.clock_ref.as_deref(), Some(reference.as_str()));
    // The plan as a shard would make it, with the Service's name resolved here to loopback.
    let local = loadgen::RunArgs {
        targets: vec![url.replace(&authority, "127.0.0.1:80")],
        clock_ref: Some(format!("http://127.0.0.1:{mock_port}")),
        shard: Some("3/4".into()),
        ..args
    };
    let plan = local.plan().unwrap();
    assert_eq!(plan.shard.count, 4);
}

#[test]
fn the_service_reaches_the_gateway_and_its_mock_sidecar() {
    let docs = docs("gateway.yaml");
    let deployment = kind(&docs, "Deployment");
    let service = kind(&docs, "Service");
    let template = &deployment["spec"]["template"];
    let labels = template["metadata"]["labels"].as_hash().unwrap();
    let selector = service["spec"]["selector"].as_hash().unwrap();
    assert!(selector.iter().all(|(k, v)| labels.get(k) == Some(v)));
    assert_eq!(
        &deployment["spec"]["selector"]["matchLabels"],
        &service["spec"]["selector"]
    );
    let containers = template["spec"]["containers"].as_vec().unwrap();
    let port_names: Vec<&str> = containers
        .iter()
        .flat_map(|c| c["ports"].as_vec().unwrap())
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    for port in service["spec"]["ports"].as_vec().unwrap() {
        let target = port["targetPort"].as_str().unwrap();
        assert!(port_names.contains(&target), "{target} not opened");
    }
    let mock = containers
        .iter()
        .find(|c| c["name"].as_str() == Some("mock"))
        .unwrap();
    let env = mock["env"].as_vec().unwrap();
    assert!(env
        .iter()
        .all(|e| e["name"].as_str().unwrap().starts_with("MOCK_")));
    assert!(env.iter().any(|e| e["name"].as_str() == Some("MOCK_LISTEN")
        && e["value"].as_str() == Some("0.0.0.0:8080")));
    assert_eq!(
        mock["readinessProbe"]["httpGet"]["path"].as_str(),
        Some("/health")
    );
    // The gateway's configuration is the ConfigMap beside it, proxying to the sidecar.
    let config = kind(&docs, "ConfigMap");
    let volume = &template["spec"]["volumes"][0];
    assert_eq!(volume["configMap"]["name"], config["metadata"]["name"]);
    let nginx = config["data"]["nginx.conf"].as_str().unwrap();
    assert!(nginx.contains("server 127.0.0.1:8080;"));
}
