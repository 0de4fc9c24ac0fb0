//! `loadgen corpus`: a seeded synthetic request corpus (JSON lines) for `run --requests-file`,
//! from its checked spec (`spec`).

mod spec;

use crate::engine::run::EXIT_OK;
use crate::generator::corpus::synth::generate;
use crate::options::CorpusArgs;
use crate::report::output::write_atomically;

use super::show;
use spec::spec;

/// Writes the corpus `args` names.
pub(crate) fn corpus_command(args: CorpusArgs) -> anyhow::Result<u8> {
    let spec = spec(&args)?;
    let mut text = Vec::new();
    let written = generate(&spec, &mut text)?;
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
