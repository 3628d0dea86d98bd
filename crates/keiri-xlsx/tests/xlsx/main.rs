//! Integration tests of the workbook patch engine.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod bounds;
mod copy;
mod dates;
mod design;
mod extract;
mod fidelity;
mod fuzz;
mod libreoffice;
mod make;
mod props;
mod read;
mod robustness;
mod rows;
mod semantics;
mod spec;
mod stop;
mod support;
mod validate;
