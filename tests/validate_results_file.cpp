// validate_results_file SCHEMA FILE: exit 0 when FILE (an mpsbench results
// file) is valid against SCHEMA, else 1 with the violations on stderr. The MPI
// tests run it on what the real executable wrote.
#include <fstream>
#include <iostream>

#include "schema_validation.hpp"

int main(int argc, char** argv) {
  if (argc != 3) {
    std::cerr << "usage: validate_results_file SCHEMA FILE\n";
    return 2;
  }
  try {
    std::ifstream schema_in(argv[1]), file_in(argv[2]);
    if (!schema_in || !file_in) {
      std::cerr << "validate_results_file: cannot read " << (schema_in ? argv[2] : argv[1]) << "\n";
      return 2;
    }
    const std::string errors = mpsb::schema_errors(nlohmann::json::parse(schema_in), nlohmann::json::parse(file_in));
    if (!errors.empty()) {
      std::cerr << "validate_results_file: " << argv[2] << " is not valid:\n" << errors;
      return 1;
    }
  } catch (const std::exception& e) {
    std::cerr << "validate_results_file: " << e.what() << "\n";
    return 2;
  }
  std::cout << "validate_results_file: " << argv[2] << " is valid\n";
  return 0;
}
