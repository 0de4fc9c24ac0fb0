//! Every profile in `profiles/` parses and validates into a plan.

use loadgen::RunArgs;

#[test]
fn every_profile_parses_and_validates() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../profiles");
    let mut seen = 0;
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().and_then(|e| e.to_str()) != Some("toml") {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        let args: RunArgs =
            toml::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        // Targets are resolved when the plan is made; profiles name only loopback targets.
        args.plan()
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        seen += 1;
    }
    assert!(seen >= 1, "no profile found in {dir}");
}

#[test]
fn profile_keys_are_the_flags() {
    let args: RunArgs = toml::from_str(
        "target = [\"http://127.0.0.1:4000/v1/chat/completions\"]\nrate = 5000\n\
         header = [\"x-a: 1\"]\nmax-tokens = 8\nscenario = \"chat-stream\"\n",
    )
    .unwrap();
    assert_eq!(args.targets.len(), 1);
    assert_eq!(args.headers, vec!["x-a: 1".to_string()]);
    assert_eq!(args.max_tokens, Some(8));
    assert!(toml::from_str::<RunArgs>("colour = 1").is_err());
}
