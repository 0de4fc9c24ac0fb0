//! Arbitrary text as a mock config file: the TOML layer and every setting's parser
//! (durations, distributions, token counts, sizes, fault rates, rate limits, shares, names).

#![no_main]

use libfuzzer_sys::fuzz_target;
use mock_upstream::RawSettings;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(settings) = toml::from_str::<RawSettings>(text) {
        if let Ok(config) = settings.validate() {
            // What validates prints back as settings that validate again.
            let printed = config.to_toml();
            toml::from_str::<RawSettings>(&printed)
                .expect("printed settings parse")
                .validate()
                .expect("printed settings validate");
        }
    }
});
