//! One module per subcommand group.

pub mod apply_patch;
pub mod chat;
pub mod eval;
pub mod extract;
pub mod generate;
pub mod llm;
pub mod mcp;
pub mod patch;
pub mod plan;
pub mod retrieve;
pub mod run;
pub mod serve;
