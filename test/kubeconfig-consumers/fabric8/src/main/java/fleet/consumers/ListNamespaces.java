/*
 * How a Java program uses a kubeconfig: fabric8 kubernetes-client loads the default kubeconfig the way its users do
 * (Config.autoConfigure: the KUBECONFIG variable, else ~/.kube/config; no path argument), and for every context in it
 * (sorted by name) a client built from Config.autoConfigure(context) lists the namespaces. On what `fleet kubeconfig
 * export` wrote, the users are exec entries: fabric8 runs the plugin itself, while it builds the Config (through
 * `sh -c`, without KUBERNETES_EXEC_INFO). Prints one JSON line per context, {"context": ..., "namespaces": [...]} or
 * {"context": ..., "error": "Class: message"}, and exits 1 when any context failed. Built by
 * test/kubeconfig-consumers/build-java.sh.
 *
 * fabric8 does not fail when an exec plugin fails: it logs a warning and goes on with no credential, so the request is
 * anonymous and fails 401 or 403; that failure is the context's error line (with a note that no credential was
 * there), never hidden. Nor does it let a plugin's stderr alone: it parses stdout and stderr together, so a plugin
 * that warns on stderr and succeeds fails the same way. Requests fail fast (30 s request timeout, no retries), and a
 * context whose exec plugin does not end is given up after 60 s (fabric8 sets no limit on the plugin and leaves its
 * stdin open).
 */
package fleet.consumers;

import io.fabric8.kubernetes.api.model.NamedContext;
import io.fabric8.kubernetes.api.model.Namespace;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.utils.Serialization;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

public final class ListNamespaces {
  private static final int REQUEST_TIMEOUT_MS = 30_000;
  private static final int CONNECTION_TIMEOUT_MS = 10_000;
  // fabric8 runs the exec plugin with no time limit (and leaves its stdin open, so one that reads stdin never ends):
  // each context is cut off after this long instead, its thread left behind for System.exit.
  private static final int CONTEXT_TIMEOUT_MS = 60_000;

  private ListNamespaces() {
  }

  public static void main(String[] args) {
    if (args.length != 0) {
      System.err.println("usage: ListNamespaces (the kubeconfig is fabric8's default: KUBECONFIG, else ~/.kube/config)");
      System.exit(2);
    }
    int status;
    try {
      status = run();
    } catch (RuntimeException e) {
      System.err.println("error: " + describe(e, null));
      status = 1;
    }
    System.out.flush();
    // Vert.x leaves non-daemon threads behind; end the JVM explicitly.
    System.exit(status);
  }

  private static int run() {
    ExecutorService pool = Executors.newCachedThreadPool(r -> {
      Thread t = new Thread(r, "context");
      t.setDaemon(true);
      return t;
    });
    // The current context's Config is built (and its exec plugin run) by this first call; it is reused below so that
    // each context's plugin runs once, as with client-go.
    Config loaded;
    try {
      loaded = within(pool, () -> Config.autoConfigure(null));
    } catch (TimeoutException e) {
      System.err.println("error: fabric8 did not load the kubeconfig in " + CONTEXT_TIMEOUT_MS / 1000
          + " s (the current context's exec plugin did not end)");
      return 1;
    }
    TreeSet<String> names = new TreeSet<>();
    for (NamedContext c : loaded.getContexts()) {
      names.add(c.getName());
    }
    if (names.isEmpty()) {
      System.err.println("error: the kubeconfig fabric8 loaded has no context (KUBECONFIG="
          + System.getenv("KUBECONFIG") + ", else ~/.kube/config)");
      return 1;
    }
    String current = loaded.getCurrentContext() == null ? null : loaded.getCurrentContext().getName();
    boolean failed = false;
    for (String name : names) {
      Map<String, Object> line = new LinkedHashMap<>();
      line.put("context", name);
      Config[] config = { null };
      try {
        line.put("namespaces", within(pool, () -> {
          config[0] = name.equals(current) ? loaded : Config.autoConfigure(name);
          return list(config[0]);
        }));
      } catch (TimeoutException e) {
        line.put("error", "no answer in " + CONTEXT_TIMEOUT_MS / 1000 + " s ("
            + (config[0] == null ? "fabric8 was still building the Config: an exec plugin that did not end" : "the list")
            + ")");
        failed = true;
      } catch (RuntimeException e) {
        String error = describe(e, config[0]);
        if (config[0] != null && !hasCredential(config[0])) {
          error += " (fabric8 had no credential for this context, so it sent the request anonymously;"
              + " an exec plugin that failed is logged on stderr)";
        }
        line.put("error", error);
        failed = true;
      }
      System.out.println(Serialization.asJson(line));
      System.out.flush();
    }
    return failed ? 1 : 0;
  }

  private static List<String> list(Config config) {
    config.setRequestTimeout(REQUEST_TIMEOUT_MS);
    config.setConnectionTimeout(CONNECTION_TIMEOUT_MS);
    config.setRequestRetryBackoffLimit(0);
    try (KubernetesClient client = new KubernetesClientBuilder().withConfig(config).build()) {
      List<String> namespaces = new ArrayList<>();
      for (Namespace n : client.namespaces().list().getItems()) {
        namespaces.add(n.getMetadata().getName());
      }
      return namespaces;
    }
  }

  /** Runs TASK on a daemon thread and waits at most CONTEXT_TIMEOUT_MS for it; its exceptions come out unwrapped. */
  private static <T> T within(ExecutorService pool, java.util.concurrent.Callable<T> task) throws TimeoutException {
    Future<T> f = pool.submit(task);
    try {
      return f.get(CONTEXT_TIMEOUT_MS, TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted", e);
    } catch (ExecutionException e) {
      Throwable cause = e.getCause();
      if (cause instanceof RuntimeException) {
        throw (RuntimeException) cause;
      }
      if (cause instanceof Error) {
        throw (Error) cause;
      }
      throw new IllegalStateException(cause);
    }
  }

  private static boolean hasCredential(Config c) {
    return notEmpty(c.getAutoOAuthToken()) || notEmpty(c.getOauthToken()) || notEmpty(c.getPassword())
        || notEmpty(c.getClientCertData()) || notEmpty(c.getClientCertFile()) || c.getOauthTokenProvider() != null;
  }

  private static boolean notEmpty(String s) {
    return s != null && !s.isEmpty();
  }

  /**
   * The exception's class and message, then each cause's (fabric8 wraps the useful one in "An error has occurred."),
   * with the context's secrets and any bearer token cut out.
   */
  private static String describe(Throwable e, Config config) {
    StringBuilder out = new StringBuilder();
    String previous = null;
    for (Throwable t = e; t != null; t = t.getCause() == t ? null : t.getCause()) {
      String one = t.getClass().getName() + ": " + t.getMessage();
      if (one.equals(previous)) {
        continue; // fabric8 wraps a KubernetesClientException in another with the same message
      }
      if (out.length() > 0) {
        out.append("; caused by ");
      }
      out.append(one);
      previous = one;
      if (out.length() > 4000) {
        break;
      }
    }
    String text = out.toString();
    if (config != null) {
      for (String secret : new String[] { config.getAutoOAuthToken(), config.getOauthToken(), config.getPassword(),
          config.getClientKeyData() }) {
        if (secret != null && secret.length() >= 4) {
          text = text.replace(secret, "REDACTED");
        }
      }
    }
    return text.replaceAll("(?i)(bearer\\s+)[^\\s\"',;]+", "$1REDACTED");
  }
}
