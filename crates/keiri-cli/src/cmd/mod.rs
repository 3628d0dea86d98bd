//! One module per subcommand group.

pub mod extract;
pub mod plan;
pub mod serve;
