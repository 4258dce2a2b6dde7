CREATE TABLE IF NOT EXISTS test (
  build_commit TEXT,
  build_number INTEGER,
  model_filename TEXT,
  model_type TEXT,
  n_ubatch INTEGER,
  n_prompt INTEGER,
  n_gen INTEGER,
  n_depth INTEGER,
  test_time TEXT,
  avg_ns INTEGER,
  stddev_ns INTEGER,
  avg_ts REAL,
  stddev_ts REAL
);

INSERT INTO test (build_commit, build_number, model_filename, model_type, n_ubatch, n_prompt, n_gen, n_depth, test_time, avg_ns, stddev_ns, avg_ts, stddev_ts) VALUES ('6a8e3b4a', 4567, '/models/Meta-Llama-3.1-8B-Instruct-Q4_K_M.gguf', 'llama 8B Q4_K - Medium', 512, 512, 0, 0, '2025-05-01T12:00:00Z', 88866925, 726312, 5761.370000, 47.100000);
INSERT INTO test (build_commit, build_number, model_filename, model_type, n_ubatch, n_prompt, n_gen, n_depth, test_time, avg_ns, stddev_ns, avg_ts, stddev_ts) VALUES ('6a8e3b4a', 4567, '/models/Meta-Llama-3.1-8B-Instruct-Q4_K_M.gguf', 'llama 8B Q4_K - Medium', 512, 0, 128, 0, '2025-05-01T12:00:05Z', 897616000, 2392000, 142.600000, 0.380000);
