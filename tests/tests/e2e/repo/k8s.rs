//! The Kubernetes manifests of `scripts/k8s/`: no cluster runs here, so what can be checked
//! without one is that they are valid objects of the Kubernetes API (its JSON schemas, through
//! the `kubernetes-validate` package) and hang together: the Job is Indexed with
//! completions = parallelism = N and passes its completion index as the shard, its arguments
//! are ones loadgen accepts, the preset it mounts makes a valid plan aimed at the Service, and
//! the Service selects the gateway's pods and names ports their containers open.

use std::path::{Path, PathBuf};

use clap::Parser as _;
use loadgen::{Cli, CommandArgs};
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
    assert_eq!(spec["backoffLimitPerIndex"].as_i64(), Some(0));
    assert!(
        spec["backoffLimit"].is_badvalue(),
        "a Job-wide limit fails every shard at once"
    );
    let pod = &spec["template"]["spec"];
    assert_eq!(pod["restartPolicy"].as_str(), Some("Never"));
    let container = &pod["containers"][0];
    let args = strings(&container["args"]);
    assert_eq!(args, ["run", "--preset=/etc/gatebench/run.toml", "--out=-"]);
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
    let shard = var("LOADGEN_SHARD")["value"].as_str().unwrap();
    assert_eq!(shard, format!("$(JOB_COMPLETION_INDEX)/{n}"));
    assert_eq!(
        var("LOADGEN_START_AT")["value"].as_str(),
        Some("__START_AT__")
    );
    let metrics = var("LOADGEN_METRICS_LISTEN")["value"].as_str().unwrap();
    let annotations = &spec["template"]["metadata"]["annotations"];
    assert_eq!(annotations["prometheus.io/scrape"].as_str(), Some("true"));
    let port = annotations["prometheus.io/port"].as_str().unwrap();
    assert!(
        metrics.ends_with(&format!(":{port}")),
        "{metrics} against port {port}"
    );
    assert_eq!(
        container["ports"][0]["containerPort"]
            .as_i64()
            .map(|p| p.to_string()),
        Some(port.to_string())
    );

    // The variables are the ones loadgen reads: what Kubernetes would put in them for index
    // N-1, with run.sh's start instant, loadgen takes as its flags.
    let command = <Cli as clap::CommandFactory>::command();
    let run_command = command.find_subcommand("run").unwrap();
    let read_from = |id: &str| {
        run_command
            .get_arguments()
            .find(|a| a.get_id() == id)
            .and_then(|a| a.get_env())
            .and_then(|e| e.to_str())
            .map(str::to_string)
    };
    assert_eq!(read_from("shard").as_deref(), Some("LOADGEN_SHARD"));
    assert_eq!(read_from("start_at").as_deref(), Some("LOADGEN_START_AT"));
    assert_eq!(
        read_from("metrics_listen").as_deref(),
        Some("LOADGEN_METRICS_LISTEN")
    );
    let at = humantime::format_rfc3339_seconds(
        std::time::SystemTime::now() + std::time::Duration::from_secs(60),
    )
    .to_string();
    let mut argv = vec!["loadgen".to_string()];
    argv.extend(args.iter().map(|a| a.to_string()));
    let index = (n - 1).to_string();
    argv.extend([
        "--shard".into(),
        shard.replace("$(JOB_COMPLETION_INDEX)", &index),
    ]);
    argv.extend([
        "--start-at".into(),
        at,
        "--metrics-listen".into(),
        metrics.into(),
    ]);
    let cli = Cli::try_parse_from(&argv).unwrap_or_else(|e| panic!("{argv:?}: {e}"));
    let CommandArgs::Run(run) = cli.command else {
        panic!("not a run: {argv:?}")
    };
    assert_eq!(
        run.shard.as_deref(),
        Some(format!("{}/{n}", n - 1).as_str())
    );

    // The preset is the ConfigMap's, mounted where --preset reads it.
    let mount = &container["volumeMounts"][0];
    let volume = pod["volumes"]
        .as_vec()
        .unwrap()
        .iter()
        .find(|v| v["name"] == mount["name"])
        .unwrap();
    let preset_docs = docs("preset.yaml");
    let config_map = kind(&preset_docs, "ConfigMap");
    assert_eq!(
        volume["configMap"]["name"].as_str(),
        config_map["metadata"]["name"].as_str()
    );
    let file = run.preset.unwrap();
    assert_eq!(file.parent().unwrap().to_str(), mount["mountPath"].as_str());
    let name = file.file_name().unwrap().to_str().unwrap();
    assert!(
        !config_map["data"][name].is_badvalue(),
        "no {name} in the ConfigMap"
    );

    // run.sh sets N on exactly the lines marked `# shards`: both counts and the shard variable.
    let text = std::fs::read_to_string(k8s("loadgen-job.yaml")).unwrap();
    let marked: Vec<&str> = text.lines().filter(|l| l.ends_with("# shards")).collect();
    assert_eq!(marked.len(), 3, "{marked:?}");
}

/// The Job as `run.sh` makes it for `shards` shards starting at `at`.
fn rendered(shards: u32, at: &str) -> String {
    let out = std::process::Command::new("bash")
        .arg(k8s("run.sh"))
        .args(["--render", &shards.to_string(), at])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn run_sh_sets_the_shard_count_and_the_start_everywhere_it_appears() {
    let text = rendered(7, "2030-01-02T03:04:05Z");
    let job = YamlLoader::load_from_str(&text).unwrap().remove(0);
    let spec = &job["spec"];
    assert_eq!(spec["completions"].as_i64(), Some(7));
    assert_eq!(spec["parallelism"].as_i64(), Some(7));
    let container = &spec["template"]["spec"]["containers"][0];
    let env = container["env"].as_vec().unwrap();
    let value = |name: &str| {
        env.iter()
            .find(|e| e["name"].as_str() == Some(name))
            .and_then(|e| e["value"].as_str())
            .unwrap()
    };
    assert_eq!(value("LOADGEN_SHARD"), "$(JOB_COMPLETION_INDEX)/7");
    assert_eq!(value("LOADGEN_START_AT"), "2030-01-02T03:04:05Z");
    assert!(!text.contains("__START_AT__"));
}

/// Validates `file` with the `kubernetes-validate` package (Kubernetes' own JSON schemas, strict:
/// an unknown or misspelt field fails) for Kubernetes `version`.
fn validate(file: &Path, version: &str) -> std::process::Output {
    let python = std::env::var("PYTHON").unwrap_or_else(|_| "python3".to_string());
    std::process::Command::new(&python)
        .args(["-m", "kubernetes_validate", "--strict", "-k", version])
        .arg(file)
        .output()
        .unwrap_or_else(|e| panic!("cannot run {python}: {e} (set GATEBENCH_SKIP_SDK=1 to skip)"))
}

#[test]
fn the_manifests_validate_against_the_kubernetes_api_schemas() {
    if std::env::var_os("GATEBENCH_SKIP_SDK").is_some() {
        eprintln!("GATEBENCH_SKIP_SDK is set: skipping kubernetes-validate");
        return;
    }
    let dir = std::env::temp_dir().join(format!("gatebench-k8s-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let job = dir.join("job.yaml");
    std::fs::write(&job, rendered(3, "2030-01-02T03:04:05Z")).unwrap();
    // The oldest Kubernetes the manifests are for (Indexed Jobs and their index label are
    // stable there), and the newest the package knows.
    // backoffLimitPerIndex is in the API from 1.29 (beta, on by default), stable in 1.33.
    for version in ["1.33.0", "1.37.0"] {
        for file in [k8s("preset.yaml"), k8s("gateway.yaml"), job.clone()] {
            let out = validate(&file, version);
            assert!(
                out.status.success(),
                "{} for {version}: {}{}",
                file.display(),
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
        }
    }
    // The validation can fail: a misspelt field is refused.
    let wrong = dir.join("wrong.yaml");
    let text = std::fs::read_to_string(&job).unwrap();
    std::fs::write(&wrong, text.replace("completionMode:", "completionMod:")).unwrap();
    assert!(!validate(&wrong, "1.37.0").status.success());
}

/// The port a Service exposes under `name`.
fn service_port(service: &Yaml, name: &str) -> i64 {
    service["spec"]["ports"]
        .as_vec()
        .unwrap()
        .iter()
        .find(|p| p["name"].as_str() == Some(name))
        .unwrap_or_else(|| panic!("no port {name}"))["port"]
        .as_i64()
        .unwrap()
}

#[test]
fn the_preset_makes_a_valid_sharded_plan_aimed_at_the_service() {
    let preset_docs = docs("preset.yaml");
    let preset = kind(&preset_docs, "ConfigMap")["data"]["run.toml"]
        .as_str()
        .unwrap()
        .to_string();
    let args: loadgen::LoadArgs = toml::from_str(&preset).unwrap();
    assert!(
        args.shard.is_none() && args.start_at.is_none(),
        "set per pod"
    );
    let url = args.targets[0].clone();
    let gateway_docs = docs("gateway.yaml");
    let service = kind(&gateway_docs, "Service");
    let port = service_port(service, "gateway");
    let authority = format!("{}:{port}", service["metadata"]["name"].as_str().unwrap());
    assert!(url.starts_with(&format!("http://{authority}/")), "{url}");
    // The clock reference is the mock's port of the same Service.
    let mock_port = service_port(service, "mock");
    let service_name = service["metadata"]["name"].as_str().unwrap();
    let reference = format!("http://{service_name}:{mock_port}");
    assert_eq!(args.clock_ref.as_deref(), Some(reference.as_str()));
    // The plan as a shard would make it, with the Service's name resolved here to loopback.
    let local = loadgen::LoadArgs {
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
