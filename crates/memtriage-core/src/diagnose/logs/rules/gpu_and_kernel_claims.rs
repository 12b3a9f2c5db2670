//! Failures of the GPU's memory and of the kernel as a report's writer claims them
//! (`My GPU runs out of memory when creating the adjacent matrix`, `This results in a
//! kernel panic and the VM rebooting`), beside `claims` (which holds the host's and
//! is at its size limit), read with its guards: no denial, no supposition, no question.

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
            // is running out of memory`, `we ran out of VRAM`), not the host (`the
            // server ran out of memory`), nor a page's word to its reader (`your GPU
            // runs out of memory`, `When the GPU runs out of memory, …`).
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
                "gpu runs out of vram",
                "gpu ran out of vram",
                "gpu is running out of vram",
                "gpu was running out of vram",
                "gpus run out of vram",
                "gpus ran out of vram",
                "gpus are running out of vram",
                "gpus were running out of vram",
                "ran out of vram",
                "run out of vram",
                "running out of vram",
            ],
            r"(?i:(?P<claim>\b(?:my|our|his|her|their|its|one) (?:gpu (?:runs|ran|is running|was running)|gpus (?:run|ran|are running|were running)) out of (?:memory|vram)\b|\bthe (?:gpu (?:ran|was running)|gpus (?:ran|were running)) out of (?:memory|vram)\b|\b(?:i|we) (?:ran|run|am running|are running|was running|were running) out of vram\b))",
            "The report says the GPU ran out of memory ({claim})",
        )
    },
    Rule {
        extract: Some(extract_claim),
        certainty: Possible,
        ..rule(
            // The device's OOM as the writer met it (`I persistently get issue of CUDA
            // OOM when …`, `we keep hitting GPU out of memory`): a verb of meeting before
            // it, as for a crash; the words alone are a page's too (`CUDA OOM` in a
            // heading, `to avoid CUDA out of memory`).
            "prose.cuda-oom-met",
            C::CudaOom,
            Warn,
            &[
                "cuda oom",
                "gpu oom",
                "vram oom",
                "cuda out of memory",
                "gpu out of memory",
                "vram out of memory",
                "cuda out-of-memory",
                "gpu out-of-memory",
                "vram out-of-memory",
                "hbm oom",
                "vmem oom",
                "hbm out of memory",
                "vmem out of memory",
                "hbm out-of-memory",
                "vmem out-of-memory",
                "oom of ",
            ],
            r"(?i:(?P<claim>\b(?:get|gets|got|getting|hit|hits|hitting|encounter(?:s|ed|ing)?|run into|ran into|running into|have|has|had|having|see|saw|seeing|face|faced|facing) (?:an? |the |this |that )?(?:(?:issue|problem|error)s? (?:of|with) )?(?:cuda|gpu|vram) (?:oom|out[- ]of[- ]memory)\b|\b(?:get|gets|got|getting|hit|hits|hitting|have|has|had|having|see|saw|seeing) (?:an? |the )?(?:hbm|vmem) (?:oom|out[- ]of[- ]memory)\b|\b(?:problem|issue) (?:is|was) (?:an? )?(?:hbm|vmem) (?:oom|out[- ]of[- ]memory)\b|\b(?:get|gets|got|getting|hit|hits|hitting|have|has|had|having|see|saw|seeing) (?:an? |the )?(?:compilation |compile[- ]time )?OOM of (?:about |around |~\s*)?\d+(?:\.\d+)?\s*[KMGT]i?B (?:of )?(?:HBM|VMEM|VRAM)\b))",
            "The report says the GPU ran out of memory ({claim})",
        )
    },
    Rule {
        extract: Some(extract_claim),
        certainty: Possible,
        ..rule(
            // Korean for the same, the device named before its memory that ran short:
            // `쿠다 메모리가 모자란다는 에러가 발생합니다` (an error says CUDA memory is
            // short), `GPU 메모리 부족`; Chinese's one word for GPU memory, said to
            // burst (`超过这个数，显存就会爆掉`, past that number the GPU memory bursts):
            // not `显存不足`, insufficient, which pages say of when it would be.
            "prose.gpu-memory-short-claim-ko",
            C::CudaOom,
            Warn,
            &["메모리", "显存"],
            r"(?i:(?P<claim>(?:쿠다|그래픽\s?카드|CUDA|GPU|VRAM)\s?메모리(?:가|는)?\s?(?:모자|부족)|显存(?:就|也|又|会|直接|都|还是|一下子)*(?:爆|炸)))",
            "The report says the GPU's memory ran short ({claim})",
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
                "to a kernel panic",
                "to kernel panic",
                "caused a kernel panic",
                "causes a kernel panic",
                "caused kernel panic",
                "causes kernel panic",
                "kernel panic",
            ],
            r"(?i:(?P<claim>\b(?:results?|resulted|ends?|ended) in (?:a )?kernel panic\b|\b(?:leads?|led) to (?:a )?kernel panic\b|\bcaus(?:es|ed) (?:a )?kernel panics?\b|\b(?:it|this|that|which|system|server|machine|node|host|vm|box|change|update|upgrade|driver|kernel) (?:\w+ly )?(?:got|hit|experienced|encountered|suffered|triggered) (?:an? |the )?(?:\w+ )?kernel panics?\b|\b(?:i|we) (?:\w+ly )?(?:got|hit|experienced|encountered) (?:an? |the )?(?:\w+ )?kernel panics?\b))",
            "The report says the kernel panicked ({claim})",
        )
    },
];
