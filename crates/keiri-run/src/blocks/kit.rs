//! What blocks of several categories share, split by concern: reading the files a block
//! names ([`files`]), decoding text files ([`decode`]), numbers and text in JSON outputs
//! ([`numbers`], [`text`]), writing and naming output files ([`outputs`]), Japan Standard Time
//! ([`time`]), hashes ([`hash`]), a bounded memo of per-value work ([`memo`]) and the steps of a long loop ([`steps`]: cancellation and
//! progress). What only the blocks of one category share stays in that
//! category's module (`blocks/<category>.rs`).

pub(crate) mod decode;
pub(crate) mod files;
pub(crate) mod hash;
pub(crate) mod memo;
pub(crate) mod numbers;
pub(crate) mod outputs;
pub(crate) mod steps;
pub(crate) mod text;
pub(crate) mod time;
