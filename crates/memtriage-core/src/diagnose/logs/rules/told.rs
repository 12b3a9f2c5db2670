//! Failures of the GPU's memory and of the kernel as a report's writer tells them
//! (`My GPU runs out of memory when creating the adjacent matrix`, `This results in a
//! kernel panic and the VM rebooting`): claims, read with the same guards as those of
//! `claims` (no denial, no supposition, no question).

use super::claims::extract_claim;
use super::{rule, FailureClass as C, Rule};
use crate::model::finding::Certainty::Possible;
use crate::model::finding::Severity::Warn;

pub(super) static RULES: &[Rule] = &[
    Rule {
        extract: Some(extract_claim),
        certainty: Possible,
        ..rule(
            // The device named as what ran out (`the GPU ran out of memory`, `my GPU
            // is running out of memory`, `ran out of VRAM`), not the host (`the server
            // ran out of memory`),
            // nor a page's word to its reader (`your GPU runs out of memory`).
            "prose.gpu-out-of-memory-claim",
            C::CudaOom,
            Warn,
            &[
                "gpu runs out of memory",
                "gpu ran out of memory",
                "gpu is running out of memory",
                "gpu was running out of memory",
                "gpus run out of memory",
                "gpus ran out of memory",
                "gpus are running out of memory",
                "gpus were running out of memory",
                "out of vram",
            ],
            r"(?i:(?P<claim>(?:\b(?:my|our|the|his|her|their|its|one) |^)(?:gpu (?:runs|ran|is running|was running)|gpus (?:run|ran|are running|were running)) out of memory\b|\b(?:runs?|ran|running) out of vram\b))",
            "The report says the GPU ran out of memory ({claim})",
        )
    },
    Rule {
        extract: Some(extract_claim),
        certainty: Possible,
        ..rule(
            // A kernel panic told as what a load led to (`This results in a kernel
            // panic`, `which caused a kernel panic`), not as a question or a risk.
            "prose.kernel-panic-claim",
            C::KernelOops,
            Warn,
            &[
                "in a kernel panic",
                "in kernel panic",
                "caused a kernel panic",
                "causes a kernel panic",
                "caused kernel panic",
                "causes kernel panic",
            ],
            r"(?i:(?P<claim>\b(?:results?|resulted|ends?|ended|leads?|led) in (?:a )?kernel panic\b|\bcaus(?:es|ed) (?:a )?kernel panics?\b))",
            "The report says the kernel panicked ({claim})",
        )
    },
];
