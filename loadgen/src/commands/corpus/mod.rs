//! `loadgen corpus`: a seeded synthetic request corpus (JSON lines) for `run --requests-file`,
//! from its checked spec (`spec`), or with `--sessions N` seeded sessions for `run --sessions`
//! (`sessions`).

mod sessions;
mod spec;

use crate::engine::run::EXIT_OK;
use crate::generator::corpus::synth::{generate, Spec};
use crate::generator::sessions::synth as session_synth;
use crate::options::CorpusArgs;
use crate::report::output::write_atomically;

use super::command::no_preset;
use super::{show, Command};
use spec::spec;

/// What `loadgen corpus` writes.
#[derive(Debug)]
pub enum Corpus {
    Requests(Spec),
    Sessions(session_synth::Spec),
}

impl Command for CorpusArgs {
    type Plan = (CorpusArgs, Corpus);

    fn plan(self) -> anyhow::Result<(CorpusArgs, Corpus)> {
        let corpus = match self.sessions {
            Some(count) => Corpus::Sessions(sessions::spec(&self, count)?),
            None => {
                sessions::sessions_only(&self)?;
                Corpus::Requests(spec(&self)?)
            }
        };
        Ok((self, corpus))
    }

    fn execute((args, corpus): (CorpusArgs, Corpus), _: Vec<String>) -> anyhow::Result<u8> {
        match corpus {
            Corpus::Requests(spec) => write(&args, &spec),
            Corpus::Sessions(spec) => {
                let mut text = Vec::new();
                let written = session_synth::generate(&spec, &mut text)?;
                put(&args, &text)?;
                gatebench_shared::say!("{}", sessions::summary(&spec, &written));
                Ok(EXIT_OK)
            }
        }
    }

    fn preset(_: &(CorpusArgs, Corpus)) -> anyhow::Result<toml::Table> {
        Err(no_preset())
    }

    fn describe((_, corpus): &(CorpusArgs, Corpus)) -> String {
        match corpus {
            Corpus::Requests(spec) => format!("corpus: {} requests", spec.count),
            Corpus::Sessions(spec) => format!("corpus: {} sessions", spec.sessions),
        }
    }
}

/// Writes `text` where `args` say (`-`: standard output).
fn put(args: &CorpusArgs, text: &[u8]) -> anyhow::Result<()> {
    if args.out.as_os_str() == "-" {
        show(&String::from_utf8_lossy(text));
        Ok(())
    } else {
        write_atomically(&args.out, text)
    }
}

/// Writes the corpus `spec` makes where `args` say.
fn write(args: &CorpusArgs, spec: &Spec) -> anyhow::Result<u8> {
    let mut text = Vec::new();
    let written = generate(spec, &mut text)?;
    put(args, &text)?;
    gatebench_shared::say!(
        "loadgen: {} requests ({} distinct, {} streaming), bodies {} to {} bytes, mean {:.0} \
         prompt and {:.0} output tokens",
        written.lines,
        written.distinct,
        written.streaming,
        written.min_bytes,
        written.max_bytes,
        written.mean_prompt_tokens,
        written.mean_output_tokens
    );
    Ok(EXIT_OK)
}
