//! `loadgen corpus`: a seeded synthetic request corpus (JSON lines) for `run --requests-file`,
//! from its checked spec (`spec`).

mod spec;

use crate::engine::run::EXIT_OK;
use crate::generator::corpus::synth::{generate, Spec};
use crate::options::CorpusArgs;
use crate::report::output::write_atomically;

use super::command::no_profile;
use super::{show, Command};
use spec::spec;

impl Command for CorpusArgs {
    type Plan = (CorpusArgs, Spec);

    fn plan(self) -> anyhow::Result<(CorpusArgs, Spec)> {
        let spec = spec(&self)?;
        Ok((self, spec))
    }

    fn execute((args, spec): (CorpusArgs, Spec), _: Vec<String>) -> anyhow::Result<u8> {
        write(&args, &spec)
    }

    fn profile(_: &(CorpusArgs, Spec)) -> anyhow::Result<toml::Table> {
        Err(no_profile())
    }

    fn describe((_, spec): &(CorpusArgs, Spec)) -> String {
        format!("corpus: {} requests", spec.count)
    }
}

/// Writes the corpus `spec` makes where `args` say.
fn write(args: &CorpusArgs, spec: &Spec) -> anyhow::Result<u8> {
    let mut text = Vec::new();
    let written = generate(spec, &mut text)?;
    if args.out.as_os_str() == "-" {
        show(&String::from_utf8_lossy(&text));
    } else {
        write_atomically(&args.out, &text)?;
    }
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
