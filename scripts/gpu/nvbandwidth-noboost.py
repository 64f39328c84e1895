#!/usr/bin/env python3
"""Let NVIDIA's nvbandwidth build where Boost is not installed.

nvbandwidth uses Boost only to parse its command line. This rewrites, in a
checkout given as the argument, that parsing into a small hand parser for
the flags gpu-smoke.sh uses (-t/--testcase NAME..., -b/--bufferSize MiB,
-i/--testSamples N, -j/--json, -s, -d, -v, -m, -l, -h) and drops Boost from
CMakeLists.txt. Nothing else of nvbandwidth changes, so its measurements are
its own. Run on a pristine checkout; exits 1 if the text it expects moved.
"""
import re
import sys

root = sys.argv[1]
src = open(f"{root}/nvbandwidth.cpp").read()
start = src.index("    // Args parsing")
end = src.index("    if (jsonOutput) {")
parser = r'''    // Args parsing (hand parser: bwscope's gpu-smoke builds without Boost)
    bufferSize = defaultBufferSize;
    loopCount = defaultLoopCount;
    averageLoopCount = defaultAverageLoopCount;
    bool wantHelp = false, wantList = false;
    const char *usage = "nvbandwidth (Boost-free build) -t NAME... -b MiB -i N -j -s -d -v -m -l -h --loopCount N";
    for (int i = 1; i < argc; i++) {
        std::string a = argv[i];
        auto next = [&](void) -> std::string {
            if (i + 1 >= argc) { std::cerr << "missing value for " << a << "\n"; exit(1); }
            return argv[++i];
        };
        if (a == "-h" || a == "--help") wantHelp = true;
        else if (a == "-l" || a == "--list") wantList = true;
        else if (a == "-b" || a == "--bufferSize") bufferSize = std::stoull(next());
        else if (a == "-i" || a == "--testSamples") averageLoopCount = std::stoul(next());
        else if (a == "--loopCount") loopCount = std::stoull(next());
        else if (a == "-v" || a == "--verbose") verbose = true;
        else if (a == "-s" || a == "--skipVerification") skipVerification = true;
        else if (a == "-d" || a == "--disableAffinity") disableAffinity = true;
        else if (a == "-m" || a == "--useMean") useMean = true;
        else if (a == "-j" || a == "--json") jsonOutput = true;
        else if (a == "--perfFormatter") perfFormatter = true;
        else if (a == "-t" || a == "--testcase" || a == "-p" || a == "--testcasePrefixes") {
            auto &list = (a == "-t" || a == "--testcase") ? testcasesToRun : testcasePrefixes;
            while (i + 1 < argc && argv[i + 1][0] != '-') list.push_back(argv[++i]);
        } else { std::cerr << "unknown argument " << a << "\n" << usage << "\n"; return 1; }
    }

'''
src = src[:start] + parser + src[end:]
# Boost's header brought these in; nvbandwidth.cpp relies on them.
src = src.replace('#include <boost/program_options.hpp>\n',
                  '#include <algorithm>\n#include <iostream>\n#include <string>\n#include <unistd.h>\n')
src = src.replace('namespace opt = boost::program_options;\n', '')
src = src.replace('vm.count("help")', 'wantHelp').replace('vm.count("list")', 'wantList')
src = src.replace('OUTPUT << visible_opts << "\\n";', 'OUTPUT << usage << "\\n";')
if "opt::" in src or "visible_opts" in src:
    sys.exit("nvbandwidth-noboost: unexpected nvbandwidth.cpp layout")
open(f"{root}/nvbandwidth.cpp", "w").write(src)

cm = open(f"{root}/CMakeLists.txt").read()
cm = re.sub(r"find_package\(Boost[^)]*\)\n", "", cm)
cm = cm.replace("Boost::program_options ", "")
if "Boost::" in cm:
    sys.exit("nvbandwidth-noboost: unexpected CMakeLists.txt layout")
open(f"{root}/CMakeLists.txt", "w").write(cm)
print("nvbandwidth-noboost: command line parsed without Boost")
