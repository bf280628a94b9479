import de.bwaldvogel.mongo.MongoDatabase;
import de.bwaldvogel.mongo.MongoServer;
import de.bwaldvogel.mongo.MongoVersion;
import de.bwaldvogel.mongo.backend.CollectionOptions;
import de.bwaldvogel.mongo.backend.CursorRegistry;
import de.bwaldvogel.mongo.backend.Index;
import de.bwaldvogel.mongo.backend.QueryResult;
import de.bwaldvogel.mongo.backend.memory.MemoryBackend;
import de.bwaldvogel.mongo.backend.memory.MemoryCollection;
import de.bwaldvogel.mongo.backend.memory.MemoryDatabase;
import de.bwaldvogel.mongo.bson.Document;
import java.net.InetSocketAddress;
import java.util.List;

/**
 * Serves the MongoDB wire protocol from mongo-java-server's in-memory backend
 * on HOST:PORT (PORT 0 picks a free one) for the tests. Prints
 * "listening <host>:<port>" once it accepts connections, and exits when
 * standard input closes (the test runner stopped or died).
 *
 * One change to the library's behaviour, towards MongoDB's: a filter that
 * names an _id (a value, or an $in of values) besides other fields is served
 * from the _id index. The library uses an index only when the filter holds
 * exactly the index's fields, so every conditional write of the adapters
 * ({_id, status: ...}) scanned the whole collection, and a long run slowed
 * down as its collections grew, which MongoDB does not do.
 */
public class MongoWireServer {
  /**
   * The library's newest preset (MONGO_5_0) announces wire version 8, below
   * the 9 (MongoDB 4.4) that the Node.js driver 7 requires; announce 4.4.
   */
  enum Announced implements MongoVersion {
    MONGO_4_4;

    @Override
    public List<Integer> getVersionArray() {
      return List.of(4, 4, 0);
    }

    @Override
    public int getWireVersion() {
      return 9;
    }
  }

  static final class IdServedCollection extends MemoryCollection {
    IdServedCollection(MongoDatabase database, String name, CollectionOptions options, CursorRegistry cursors) {
      super(database, name, options, cursors);
    }

    @Override
    protected QueryResult queryDocuments(Document query, Document orderBy, int skip, int limit, int batchSize, Document fieldSelector) {
      String idField = getIdField();
      if (idField != null && query.size() > 1 && query.containsKey(idField)) {
        Document byId = new Document(idField, query.get(idField));
        for (Index<Integer> index : getIndexes()) {
          // The index narrows the candidates; the whole filter still decides which match.
          if (index.canHandle(byId)) {
            return matchDocuments(query, index.getPositions(byId), orderBy, skip, limit, batchSize, fieldSelector);
          }
        }
      }
      return super.queryDocuments(query, orderBy, skip, limit, batchSize, fieldSelector);
    }
  }

  static final class IdServedDatabase extends MemoryDatabase {
    IdServedDatabase(String name, CursorRegistry cursors) {
      super(name, cursors);
    }

    @Override
    protected MemoryCollection openOrCreateCollection(String name, CollectionOptions options) {
      return new IdServedCollection(this, name, options, cursorRegistry);
    }
  }

  static final class IdServedBackend extends MemoryBackend {
    @Override
    public MemoryDatabase openOrCreateDatabase(String name) {
      return new IdServedDatabase(name, getCursorRegistry());
    }
  }

  public static void main(String[] args) throws Exception {
    String host = args.length > 0 ? args[0] : "127.0.0.1";
    int port = args.length > 1 ? Integer.parseInt(args[1]) : 0;
    MongoServer server = new MongoServer(new IdServedBackend().version(Announced.MONGO_4_4));
    server.bind(host, port);
    InetSocketAddress address = server.getLocalAddress();
    System.out.println("listening " + address.getHostString() + ":" + address.getPort());
    System.out.flush();
    while (System.in.read() != -1) {
      // nothing is sent; only the end of the stream matters
    }
    server.shutdownNow();
    System.exit(0);
  }
}
