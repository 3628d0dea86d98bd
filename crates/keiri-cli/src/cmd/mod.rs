//! One module per subcommand group.

pub mod plan;
pub mod serve;
