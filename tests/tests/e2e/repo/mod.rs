//! The repository's own promises: the docs name every flag and every command in them parses,
//! the presets make valid plans, the results match their schemas, the k8s manifests and the
//! packages hold together, and the bench scripts' helpers compute what their examples say.

mod docs;
mod k8s;
mod packaging;
mod presets;
mod schema;
mod scripts;
