//! Every preset in `presets/` is registered with its command here, parses as that command's
//! options, and makes a valid plan (nothing is sent).

use std::path::Path;

use loadgen::LoadArgs;

/// Each preset and the command that runs it.
const PRESETS: [(&str, &str); 8] = [
    ("quickstart.toml", "run"),
    ("constant-5000rps.toml", "compare"),
    ("paired-latency.toml", "overhead"),
    ("concurrency-sweep.toml", "sweep"),
    ("streams-ladder.toml", "ladder"),
    ("realistic-mix.toml", "run"),
    ("capacity.toml", "capacity"),
    ("gateway-profile.toml", "profile"),
];

fn dir() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../presets"))
}

#[test]
fn every_preset_parses_and_validates() {
    for entry in std::fs::read_dir(dir()).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().and_then(|e| e.to_str()) != Some("toml") {
            continue;
        }
        let name = path.file_name().unwrap().to_str().unwrap();
        let Some((_, command)) = PRESETS.iter().find(|(file, _)| *file == name) else {
            panic!("{name} is not registered in PRESETS with its command");
        };
        loadgen::commands::check_preset::check(command, &path)
            .unwrap_or_else(|e| panic!("{name}: {e:#}"));
    }
    for (file, _) in PRESETS {
        assert!(dir().join(file).is_file(), "{file} is missing");
    }
}

#[test]
fn presets_say_what_their_method_says() {
    let read = |name: &str| -> toml::Table {
        toml::from_str(&std::fs::read_to_string(dir().join(name)).unwrap()).unwrap()
    };
    let constant = read("constant-5000rps.toml");
    assert_eq!(constant["rate"].as_integer(), Some(5000));
    assert_eq!(constant["duration"].as_str(), Some("60s"));
    // 25 warm-up requests at 5,000/s, constant arrival.
    assert_eq!(constant["warmup"].as_str(), Some("5ms"));
    let profile = read("gateway-profile.toml");
    assert_eq!(profile["frequency"].as_integer(), Some(997));
    assert_eq!(profile["warmup"].as_str(), Some("2s"));
    let paired = read("paired-latency.toml");
    assert_eq!(paired["rounds"].as_integer(), Some(50));
    assert_eq!(paired["warmup-rounds"].as_integer(), Some(5));
    assert_eq!(paired["trials"].as_integer(), Some(10));
    assert_eq!(paired["max-tokens"].as_integer(), Some(5));
    let sweep = read("concurrency-sweep.toml");
    assert_eq!(sweep["requests"].as_integer(), Some(5000));
    assert_eq!(sweep["levels"].as_array().map(Vec::len), Some(5));
    let ladder = read("streams-ladder.toml");
    assert_eq!(ladder["max-tokens"].as_integer(), Some(60));
}

#[test]
fn a_preset_of_the_wrong_command_is_refused() {
    let sweep = dir().join("concurrency-sweep.toml");
    assert!(loadgen::commands::check_preset::check("run", &sweep).is_err());
    assert!(loadgen::commands::check_preset::check("overhead", &sweep).is_err());
    assert!(loadgen::commands::check_preset::check("dance", &sweep).is_err());
}

#[test]
fn preset_keys_are_the_flags() {
    let args: LoadArgs = toml::from_str(
        "target = [\"http://127.0.0.1:4000/v1/chat/completions\"]\nrate = 5000\n\
         header = [\"x-a: 1\"]\nmax-tokens = 8\nscenario = \"chat-stream\"\n",
    )
    .unwrap();
    assert_eq!(args.targets.len(), 1);
    assert_eq!(args.request.headers, vec!["x-a: 1".to_string()]);
    assert_eq!(args.request.max_tokens, Some(8));
    assert!(toml::from_str::<LoadArgs>("colour = 1").is_err());
}
