/* SPDX-License-Identifier: Apache-2.0 */
/*
 * kuai selftest: known-answer vectors through every backend usable here;
 * kuai info: the CPU features the library sees and its choice per cipher.
 */
#define _GNU_SOURCE
#include "cli.h"

#include <stdlib.h>
#include <string.h>

#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/kdf.h>

enum { V_ECB, V_CBC, V_CTR, V_GCM };

/* Known answers, as data (hex). Each names its source. */
typedef struct kat {
    kuai_cipher c;
    int mode;
    const char *source;
    const char *key, *iv, *aad, *pt, *ct, *tag;
} kat;

static const kat kats[] = {
    {KUAI_UBLOCK_128_128, V_ECB, "tests/vectors/ublock-128-128.txt [ECB 1]",
     "17fccf03cbfcbf9ef9b1242777292145", "", "", "fa1d0d63640426ec84b13f8749e26b02",
     "edfb51e91841540d3ec8bea5ac75b25e", ""},
    {KUAI_UBLOCK_128_128, V_ECB, "tests/vectors/ublock-128-128.txt [ECB 10]",
     "7a0ea41e6ef5ec907be22332014d315c", "", "",
     "3674a67f1b7e9c9dfc6a6ea7a466e158ad32069246d41aad348caa0f170afafcefdfa8b0de328dab30b4e44d98d6a"
     "ea2bc39557ff4658fce4fbf8526d8b5359f173c14e4da7cf88935c9369fc7d607863f2531031fc2e392c031e0fe96"
     "a5df2eb673324295c5a7df1393acc6b8cfb6ac3de0e3464e52dea38ecc03bedc42c354d56b4af399766054d2f98de"
     "af32a81bbbe51b26f097d47a6c176358f2ff4a8b7",
     "734fdd5c41a73e7d1636b0f1e80890235ba70bbbc754e60febfe464efad3185f535c4400311af3ecce0eeb6ed88be"
     "78aff631969921d7a7f5f3165d315a8a0eb5f0114ca5feb0fb2eb39c0d9fe66fe0d92c6837b713154da8b138b5fb9"
     "74b482e8b2f1fc7e744ccc3bc037401373f2d24e3d6685344b0041a24a485beb311f98a3656747cf46cb51207a981"
     "7d2e48fe2644d58e72bb13a089e781ba945b2ad0a",
     ""},
    {KUAI_UBLOCK_128_128, V_CBC, "tests/vectors/ublock-128-128.txt [CBC 10]",
     "79bea3c6176b4a0cdb9e7487bb46e04c", "00000000000000000000000000000000", "",
     "ee7732ed28a8440825085e4de076742d168f3dd45573e80a56cc0b578c0ddc6bfdf8a3bc51636f71283b087fb1c92"
     "6127934e02e804867969275f4edd41bff1b9e05b2f288339d12c8dcab09bbb355bfc16a15124e741ebd3e104a7e69"
     "83547878a447d6f79e36b1abf22e3325bb69fd9736c4c7e781734602a3f45373cd414934e04aafc32ea2177985794"
     "5186aca94a3a2d59672f7d0fb8538dab419823058",
     "064399f4eceb1ad5e5bdf23923ce81af2c98a7fd1a3aaafa86bf8778752b1bf406b7c98679214d52b13f40c004305"
     "97e1a32eda8997c2279ca091008cd9ac46f81d199f13cb5019b0952a7ffe9c3bd3959c46533b26e36d0fd98e87643"
     "a221fbac70192d954c73b7d0bb93618cd1e24af5e8e59e5fc1e6d6ae09593309287950a93d7019af22afd423fa6ab"
     "2ec1e4ee8374f6fd596982a16ac5c8f023b502f96",
     ""},
    {KUAI_UBLOCK_128_256, V_ECB, "tests/vectors/ublock-128-256.txt [ECB 1]",
     "efd391c7c710ca8c61c564d77cc3b924f192084795bd785d61715a02d046afc4", "", "",
     "ba7c728c3b6d8cbe6bcae78f8ede7bac", "091bafadd06935072bb05da6fa8e43bd", ""},
    {KUAI_UBLOCK_128_256, V_ECB, "tests/vectors/ublock-128-256.txt [ECB 10]",
     "afd7118051347814775988ab9e5d493bb40cadfed89474c862824d9823ed3e6d", "", "",
     "be44fd1f41f483102a489ebe640d3486aaa476e949b4c1df271cc26d042cde790014d1de5d9c95bc871685115191c"
     "28e8250d6a3907b97ddab134e71fd2b191931568e1e325ca1b63531c891f9275daf4d624374d48cccfe05cbdab675"
     "f0452559f27d0a469a71a93c7faf65e335cc9114c206849b5128eb3c2bae64f4e22a4880cfe6c724bfcb3ba5ea81b"
     "69725d8dddf5867fa7031734c581a12a200698f28",
     "2a8ae1978a7cc632e88a040f12fb7fac35a31d2bc94c8934e2ea6d2cacf7d7c279314847c376893a4fdc3bd702ffb"
     "0b543084e7d40ccbb54b2d2cc1256568b6e72dd1b80286157b66c9ab073d63a5ef4c122ff2036d0e6c820650be70a"
     "ae249a79afcd0125bd51f40b430ef1b224abd56f71a9cc85af2b1548ddb7ae5a7b32ae126d5d6b5ea5105a740389f"
     "f2534e2ec62946ad8f6e88eb4de466e45106a064f",
     ""},
    {KUAI_UBLOCK_128_256, V_CBC, "tests/vectors/ublock-128-256.txt [CBC 10]",
     "d4ed90d0c829d849a6f0a0d698928ecf9fdfc02fe330bdad48a7ab2841b7c348",
     "00000000000000000000000000000000", "",
     "10eb8a0e8a6c7632a0e22c0c64e768b39bfb3e3d14830ce33911ac61e4e6ee9c74b645871fabc0478aac3c9696ded"
     "9657d6baac51f83b10796a10a2210106656deadbb0fc8ee3a0ca42382c027fc13f9fa4c05bf100cfa7f38a35169ee"
     "659c167759546e2d3fccc917d16454bc4affb73925b7f49227cf92469fe8fc26ed78246641796bf5a55ec50a3e4b1"
     "800ce85e6637e282c4bdb188ae81e39a35fb0e3c7",
     "c97f7c4a05d60ab9c2152c0f3b9b60e674304ba7fea88d263c35f90c3ba84629b291c0983a6703079a342ba949696"
     "9dd7c52a3b29fdf440b9c562429de4fe77f5955fdb0cf652408fb9f417929791b266d069c216a41f7a2b0bcb70484"
     "45f9f813e63af319b00d9e6621a5da3998482cfd402d9f2738f024200593f0ecdf5bd0d804218f6e3d90de0a2471e"
     "77522fa76d04522bf057974e27d6e63870121271a",
     ""},
    {KUAI_UBLOCK_256_256, V_ECB, "tests/vectors/ublock-256-256.txt [ECB 1]",
     "8491be6a43cfd2ff48afa28034e26c3fdd7161bd95f60577b00bd8024003365a", "", "",
     "56377b2820eb6595978fa0af2f53ef37771de97a57c55b269585e85b9eabf205",
     "83885cc7afd5aec2e9e7c19f575ddb085e86f12c964104fe588aa30f0f21ad72", ""},
    {KUAI_UBLOCK_256_256, V_ECB, "tests/vectors/ublock-256-256.txt [ECB 10]",
     "10807dcb7f3d600f2c08cea02c2c2d58c2776c80dda69ee9e11ee838aadd9e82", "", "",
     "6de9b7b8e67b4f4c53f4dfe7e750c96ebec6b7f8653f3adf9d0db2185cda6dbf15de13f6395641f0fe3174495f0c2"
     "99964604248a3faaca407ac3f30d043e53fdbb8ffc224ab045f890c6bc3d11ccc38ec94427a7c2313c6951e9335c1"
     "74454848e044c4ae62e1c07cef8efc4468fb74dfc97e35f9a3b870d0cc76cd3854d501e3bcaaa3df63203b6041a39"
     "dc0d7fd75c466bf222160e3c83e1cafa03ccddd9334b5f808bf9609fabc6a734d4d531c6223d5cde9fc43dcf66977"
     "0857d5c6a426c334f89a57e3e42218d2c6b5f4c49e63857d70319234ea23d946479a0b2873e0199f7002ae33f8def"
     "ce1647cbc10cca270c670a2ec1c567714ef3510e7d992ecbd5f29e7cc6c8e54f1ff144bae20ee446f1894e511e169"
     "19a4dc9a6270c2497037ddebf2ba78eeac7e949fcad0dc4c7407dba5a2096d683211733e38afcbe095",
     "7296b852dcf261d89b0a9a3c175c856a3de0de84ff6d27151012fa867b12e76192ea4fb2b3010647e6a1039f436bf"
     "620a120174d85674e1c847ddc56b3b88862921f85154465d178b77f00ca388f85fedba2f25ca39ca4231eb5875428"
     "28fc9348b43af6bcb7f2fada90f32a8fe80c9ed326b67c6ae7db73b85480610ae0859c969f68872df61feeb891d9f"
     "5a9086b8d4a15f51cded5570f7568c5f91dea01b3787e5ea0e077eea2059c36b74518146a441406de0b3ea75dfb1a"
     "c03011513c0a232330b34951d593007359faa12c8aa8ae19aab63ebbb338ee2e4689397afa48b9381bdae1ad5e1b8"
     "3b6fca64013f49ab80134c7b555fb0bb1b06968a0b994ac7cd2112b98945cdfa565a220eef1f87fffc302225f69ac"
     "8657d4bcae7bfe7af77e5ca1a000d601eed4be67681ffe3efe6d438f8e5886b2b48d9f07e8445c6911",
     ""},
    {KUAI_UBLOCK_256_256, V_CBC, "tests/vectors/ublock-256-256.txt [CBC 10]",
     "ea710674971a389e1eb51c15901af99409076adf936f60b1471566f5b65a2938",
     "0000000000000000000000000000000000000000000000000000000000000000", "",
     "b59aeba94fefc9bc4a9b29b07643ed6c6a310b9f6ba491b18f6ae6f921b15230481bc025e410c3b3b958d8f0cfe9e"
     "ba818fd1c0a5468c2a03229b085b83fb8d2e4be6e5994212e96a3e261e25548fbeaf5814860bcf0e9f0f5c81a765f"
     "da366ed3ab7cab26ca134d51604cedcf09281a47e21a096be40d882070a934df2ad2ec5b0b728564b279bf0bfb227"
     "807d37720574b176d29eb3750fb48e72700d89634c506d94e148268d619db69edc34ff2e46de2c9f4bead6e30cd79"
     "5bb7898c8a2e59c3386effe1e979c227acb3cc25a04fd1cfb707f1d3ba10e02a8d4d44edb5c35e6b174ded7802904"
     "f087032eafc8947ca3b690c8b0523d87a84064ff7a41fd91e25fe53a6efbd0408a53fd2e47cb6b5a14e686d55eab2"
     "70e4af4d276b59d059df1a76e8f1ed22bb3527a0fb844e2e829f2f3b90142b6ec066d2ea3b68b3d12c",
     "35304ee60a87e0c88509caf485ff90073d2a4331595be21a74d698a1ab0139a1ad54ebf1eb912e3a1fa62dc60730a"
     "b1d551230c02a43ee528cc52b93bc6395fda0ecbb27701244a986c1569f49c62c5d49f2bf723a137cc9757cfac4dd"
     "6444a48b06e4b57ce19e30018ec3196d0133a64b8ea4b39cb27447ab8875a2f58b67e915ed8980e9ba06e215a079b"
     "e3aab5f3b35096b80b2cedf2fd5c7eeb8d83f6dea28d053b20692daafee0216cddb9ba35266b9e523f71dcac88102"
     "028edc52bc7d7a495ff4176e671c55304270e899ff28d2e33b78bc115669f9eb5bc187e756729549577001d057043"
     "a93f494692d47ef2fe4c995867b6245a26fc890490b29ec04b9166aaed4047be18359f7c933d4812cde7e33e9bf96"
     "6bcaf286bd19952403b0ca375dd555eb5dadbaed78086e09353ff52691ede48f46a33a9f1f3b562df4",
     ""},
    /* SM4 */
    {KUAI_SM4, V_ECB, "GB/T 32907-2016, example 1", "0123456789abcdeffedcba9876543210", "", "",
     "0123456789abcdeffedcba9876543210", "681edf34d206965e86b3e94f536e4246", ""},
    {KUAI_SM4, V_CBC, "draft-ribose-cfrg-sm4-10, CBC example 1", "0123456789abcdeffedcba9876543210",
     "000102030405060708090a0b0c0d0e0f", "",
     "aaaaaaaabbbbbbbbccccccccddddddddeeeeeeeeffffffffaaaaaaaabbbbbbbb",
     "78ebb11cc40b0a48312aaeb2040244cb4cb7016951909226979b0d15dc6a8f6d", ""},
    {KUAI_SM4, V_CTR, "draft-ribose-cfrg-sm4-10, CTR example 2", "fedcba98765432100123456789abcdef",
     "000102030405060708090a0b0c0d0e0f", "",
     "aaaaaaaaaaaaaaaabbbbbbbbbbbbbbbbccccccccccccccccddddddddddddddddeeeeeeeeeeeeeeeefffffffffffff"
     "fffaaaaaaaaaaaaaaaabbbbbbbbbbbbbbbb",
     "5dcccd25b95ab07417a08512ee160e2f8f661521cbbab44cc87138445bc29e5c0ae0297205d62704173b21239b887"
     "f6c8cb5b800917a2488284bde9e16ea2906",
     ""},
    {KUAI_SM4, V_GCM, "RFC 8998, A.1 (SM4-GCM)", "0123456789abcdeffedcba9876543210",
     "00001234567800000000abcd", "feedfacedeadbeeffeedfacedeadbeefabaddad2",
     "aaaaaaaaaaaaaaaabbbbbbbbbbbbbbbbccccccccccccccccddddddddddddddddeeeeeeeeeeeeeeeefffffffffffff"
     "fffeeeeeeeeeeeeeeeeaaaaaaaaaaaaaaaa",
     "17f399f08c67d5ee19d0dc9969c4bb7d5fd46fd3756489069157b282bb200735d82710ca5c22f0ccfa7cbf93d496a"
     "c15a56834cbcf98c397b4024a2691233b8d",
     "83de3541e4c2b58177e065a9bf7b62ec"},
    /* AES */
    {KUAI_AES_128, V_ECB, "FIPS-197, appendix C.1", "000102030405060708090a0b0c0d0e0f", "", "",
     "00112233445566778899aabbccddeeff", "69c4e0d86a7b0430d8cdb78070b4c55a", ""},
    {KUAI_AES_192, V_ECB, "FIPS-197, appendix C.2",
     "000102030405060708090a0b0c0d0e0f1011121314151617", "", "", "00112233445566778899aabbccddeeff",
     "dda97ca4864cdfe06eaf70a0ec0d7191", ""},
    {KUAI_AES_256, V_ECB, "FIPS-197, appendix C.3",
     "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f", "", "",
     "00112233445566778899aabbccddeeff", "8ea2b7ca516745bfeafc49904b496089", ""},
    {KUAI_AES_128, V_CBC, "NIST SP 800-38A, F.2.1 (CBC-AES128.Encrypt)",
     "2b7e151628aed2a6abf7158809cf4f3c", "000102030405060708090a0b0c0d0e0f", "",
     "6bc1bee22e409f96e93d7e117393172aae2d8a571e03ac9c9eb76fac45af8e5130c81c46a35ce411e5fbc1191a0a5"
     "2eff69f2445df4f9b17ad2b417be66c3710",
     "7649abac8119b246cee98e9b12e9197d5086cb9b507219ee95db113a917678b273bed6b8e3c1743b7116e69e22229"
     "5163ff1caa1681fac09120eca307586e1a7",
     ""},
    {KUAI_AES_256, V_CBC, "NIST SP 800-38A, F.2.5 (CBC-AES256.Encrypt)",
     "603deb1015ca71be2b73aef0857d77811f352c073b6108d72d9810a30914dff4",
     "000102030405060708090a0b0c0d0e0f", "",
     "6bc1bee22e409f96e93d7e117393172aae2d8a571e03ac9c9eb76fac45af8e5130c81c46a35ce411e5fbc1191a0a5"
     "2eff69f2445df4f9b17ad2b417be66c3710",
     "f58c4c04d6e5f1ba779eabfb5f7bfbd69cfc4e967edb808d679f777bc6702c7d39f23369a9d9bacfa530e26304231"
     "461b2eb05e2c39be9fcda6c19078c6a9d1b",
     ""},
    {KUAI_AES_128, V_CTR, "NIST SP 800-38A, F.5.1 (CTR-AES128.Encrypt)",
     "2b7e151628aed2a6abf7158809cf4f3c", "f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff", "",
     "6bc1bee22e409f96e93d7e117393172aae2d8a571e03ac9c9eb76fac45af8e5130c81c46a35ce411e5fbc1191a0a5"
     "2eff69f2445df4f9b17ad2b417be66c3710",
     "874d6191b620e3261bef6864990db6ce9806f66b7970fdff8617187bb9fffdff5ae4df3edbd5d35e5b4f09020db03"
     "eab1e031dda2fbe03d1792170a0f3009cee",
     ""},
    {KUAI_AES_192, V_CTR, "NIST SP 800-38A, F.5.3 (CTR-AES192.Encrypt)",
     "8e73b0f7da0e6452c810f32b809079e562f8ead2522c6b7b", "f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff", "",
     "6bc1bee22e409f96e93d7e117393172aae2d8a571e03ac9c9eb76fac45af8e5130c81c46a35ce411e5fbc1191a0a5"
     "2eff69f2445df4f9b17ad2b417be66c3710",
     "1abc932417521ca24f2b0459fe7e6e0b090339ec0aa6faefd5ccc2c6f4ce8e941e36b26bd1ebc670d1bd1d665620a"
     "bf74f78a7f6d29809585a97daec58c6b050",
     ""},
    {KUAI_AES_256, V_CTR, "NIST SP 800-38A, F.5.5 (CTR-AES256.Encrypt)",
     "603deb1015ca71be2b73aef0857d77811f352c073b6108d72d9810a30914dff4",
     "f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff", "",
     "6bc1bee22e409f96e93d7e117393172aae2d8a571e03ac9c9eb76fac45af8e5130c81c46a35ce411e5fbc1191a0a5"
     "2eff69f2445df4f9b17ad2b417be66c3710",
     "601ec313775789a5b7a7f504bbf3d228f443e3ca4d62b59aca84e990cacaf5c52b0930daa23de94ce87017ba2d849"
     "88ddfc9c58db67aada613c2dd08457941a6",
     ""},
    {KUAI_AES_128, V_GCM, "McGrew & Viega, The GCM mode of operation, test case 2",
     "00000000000000000000000000000000", "000000000000000000000000", "",
     "00000000000000000000000000000000", "0388dace60b6a392f328c2b971b2fe78",
     "ab6e47d42cec13bdf53a67b21257bddf"},
};

static size_t unhex(const char *h, uint8_t *out)
{
    size_t n = 0;
    if (hex_decode(h, out, 512, &n))
        fail(EXIT_INTERNAL, "selftest: bad hex in a built-in vector");
    return n;
}

/* One vector through one key (set up with the backend under test): both
 * directions, and for ECB/CBC the multi-key call too (three copies of the
 * stream, so the backend's lane kernel runs). NULL when it passes, else
 * what failed. */
static const char *run_kat(const kat *v, const kuai_key *k)
{
    static uint8_t key[64], iv[32], aad[64], pt[512], ct[512], tag[16], out[512], ivw[3][32],
        outm[3][512];
    unhex(v->key, key);
    size_t ivlen = unhex(v->iv, iv), aadlen = unhex(v->aad, aad), len = unhex(v->pt, pt);
    unhex(v->ct, ct);
    size_t taglen = unhex(v->tag, tag);
    uint8_t t[16];
    switch (v->mode) {
    case V_ECB:
        if (kuai_ecb_encrypt(k, pt, out, len) || memcmp(out, ct, len))
            return "ECB encryption";
        if (kuai_ecb_decrypt(k, ct, out, len) || memcmp(out, pt, len))
            return "ECB decryption";
        break;
    case V_CBC:
        memcpy(ivw[0], iv, ivlen);
        if (kuai_cbc_encrypt(k, ivw[0], pt, out, len) || memcmp(out, ct, len))
            return "CBC encryption";
        memcpy(ivw[0], iv, ivlen);
        if (kuai_cbc_decrypt(k, ivw[0], ct, out, len) || memcmp(out, pt, len))
            return "CBC decryption";
        break;
    case V_CTR:
        memcpy(ivw[0], iv, ivlen);
        if (kuai_ctr_crypt(k, ivw[0], pt, out, len) || memcmp(out, ct, len))
            return "CTR";
        /* in two pieces: the counter carries over */
        memcpy(ivw[0], iv, ivlen);
        size_t half = len / 2 / ivlen * ivlen;
        if (kuai_ctr_crypt(k, ivw[0], pt, out, half) ||
            kuai_ctr_crypt(k, ivw[0], pt + half, out + half, len - half) || memcmp(out, ct, len))
            return "CTR in two calls";
        break;
    case V_GCM:
        if (kuai_gcm_encrypt(k, iv, ivlen, aad, aadlen, pt, out, len, t, taglen) ||
            memcmp(out, ct, len) || memcmp(t, tag, taglen))
            return "GCM encryption";
        if (kuai_gcm_decrypt(k, iv, ivlen, aad, aadlen, ct, out, len, tag, taglen) ||
            memcmp(out, pt, len))
            return "GCM decryption";
        memcpy(t, tag, taglen);
        t[0] ^= 1;
        if (kuai_gcm_decrypt(k, iv, ivlen, aad, aadlen, ct, out, len, t, taglen) != KUAI_ERR_AUTH)
            return "GCM decryption accepted a wrong tag";
        break;
    }
    if (v->mode == V_ECB || v->mode == V_CBC) {
        const kuai_key *ks[3] = {k, k, k};
        const uint8_t *ins[3] = {pt, pt, pt};
        uint8_t *outs[3] = {outm[0], outm[1], outm[2]};
        uint8_t *ivs[3] = {ivw[0], ivw[1], ivw[2]};
        for (int i = 0; i < 3; i++)
            memcpy(ivw[i], iv, ivlen);
        int rc = v->mode == V_ECB ? kuai_ecb_encrypt_multi(ks, ins, outs, 3, len)
                                  : kuai_cbc_encrypt_multi(ks, ivs, ins, outs, 3, len);
        for (int i = 0; i < 3; i++)
            if (rc || memcmp(outm[i], ct, len))
                return "multi-key encryption";
        for (int i = 0; i < 3; i++) {
            memcpy(ivw[i], iv, ivlen);
            ins[i] = ct;
        }
        rc = v->mode == V_ECB ? kuai_ecb_decrypt_multi(ks, ins, outs, 3, len)
                              : kuai_cbc_decrypt_multi(ks, ivs, ins, outs, 3, len);
        for (int i = 0; i < 3; i++)
            if (rc || memcmp(outm[i], pt, len))
                return "multi-key decryption";
    }
    return NULL;
}

/* The OpenSSL pieces the container uses. */
static const char *check_scrypt(void)
{
    /* RFC 7914, section 12, third vector */
    static const char want[] = "fdbabe1c9d3472007856e7190d01e9fe7c6ad7cbc8237830e77376634b3731622e"
                               "af30d92e22a3886ff109279d9830dac727afb94a83ee6d8360cbdfa2cc0640";
    uint8_t out[64], exp[64];
    unhex(want, exp);
    if (EVP_PBE_scrypt("password", 8, (const uint8_t *)"NaCl", 4, 1024, 8, 16, 64u << 20, out,
                       64) != 1 ||
        memcmp(out, exp, 64))
        return "scrypt (RFC 7914)";
    return NULL;
}

static const char *check_hkdf(void)
{
    /* RFC 5869, appendix A.1 */
    uint8_t ikm[22], salt[13], info[10], out[42], exp[42];
    memset(ikm, 0x0b, sizeof ikm);
    for (int i = 0; i < 13; i++)
        salt[i] = (uint8_t)i;
    for (int i = 0; i < 10; i++)
        info[i] = (uint8_t)(0xf0 + i);
    unhex("3cb25f25faacd57a90434f64d0362f2a2d2d0a90cf1a5a4c5db02d56ecc4c5bf34007208d5b887185865",
          exp);
    EVP_KDF *kdf = EVP_KDF_fetch(NULL, "HKDF", NULL);
    EVP_KDF_CTX *kc = kdf ? EVP_KDF_CTX_new(kdf) : NULL;
    EVP_KDF_free(kdf);
    OSSL_PARAM params[] = {
        OSSL_PARAM_construct_utf8_string(OSSL_KDF_PARAM_DIGEST, (char *)"SHA256", 0),
        OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_KEY, ikm, sizeof ikm),
        OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_SALT, salt, sizeof salt),
        OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_INFO, info, sizeof info),
        OSSL_PARAM_construct_end()};
    int ok = kc && EVP_KDF_derive(kc, out, sizeof out, params) == 1 && !memcmp(out, exp, 42);
    EVP_KDF_CTX_free(kc);
    return ok ? NULL : "HKDF-SHA-256 (RFC 5869)";
}

/* The library's cipher list (at most MAX_CIPHERS of it). */
#define MAX_CIPHERS 64
static size_t cipher_list(kuai_cipher *list)
{
    size_t n = kuai_ciphers(list, MAX_CIPHERS);
    return n < MAX_CIPHERS ? n : MAX_CIPHERS;
}

static int has_help(int argc, char **argv)
{
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help"))
            return 1;
    return 0;
}

int cmd_selftest(int argc, char **argv)
{
    int verbose = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            puts("usage: kuai selftest [-v]\n"
                 "\n"
                 "Runs built-in known-answer vectors (the uBlock designers' set, GB/T\n"
                 "32907-2016 and draft-ribose-cfrg-sm4 for SM4, RFC 8998 SM4-GCM, FIPS-197,\n"
                 "SP 800-38A and the GCM paper for AES) through every backend usable on\n"
                 "this CPU: ECB, CBC, CTR, GCM and multi-key calls, both directions. Then\n"
                 "the OpenSSL pieces the container uses (scrypt, HKDF-SHA-256). Prints\n"
                 "PASS, FAIL or SKIP (cipher not in this build) per backend; exit code 4 on\n"
                 "any FAIL.\n"
                 "  -v, --verbose   name every vector\n"
                 "  -h, --help      this help");
            return 0;
        } else if (!strcmp(argv[i], "-v") || !strcmp(argv[i], "--verbose")) {
            verbose = 1;
        } else {
            fail(EXIT_USAGE, "unknown option '%s' (see kuai selftest --help)", argv[i]);
        }
    }
    int fails = 0, passes = 0;
    kuai_cipher ciphers[MAX_CIPHERS];
    size_t nciphers = cipher_list(ciphers);
    kuai_key *k = xmalloc(sizeof *k);
    for (size_t ci = 0; ci < nciphers; ci++) {
        kuai_cipher c = ciphers[ci];
        const char *cn = kuai_cipher_name(c);
        const char *names[32];
        size_t nb = kuai_backends(c, names, 32);
        if (nb > 32)
            nb = 32;
        size_t nv = 0;
        for (size_t v = 0; v < sizeof kats / sizeof kats[0]; v++)
            nv += kats[v].c == c;
        if (nb == 0) {
            printf("SKIP  %-15s (not available in this build)\n", cn);
            continue;
        }
        if (nv == 0) {
            /* a cipher of the library's list without a known answer here
             * would otherwise pass every backend vacuously */
            printf("FAIL  %-15s (no built-in known-answer vector)\n", cn);
            fails++;
            continue;
        }
        for (size_t b = 0; b < nb; b++) {
            const char *what = NULL, *src = NULL;
            for (size_t v = 0; v < sizeof kats / sizeof kats[0] && !what; v++) {
                if (kats[v].c != c)
                    continue;
                uint8_t key[64];
                size_t kl = unhex(kats[v].key, key);
                int rc = kuai_key_init_backend(k, c, key, kl, names[b]);
                if (rc) {
                    what = kuai_strerror(rc);
                } else {
                    what = run_kat(&kats[v], k);
                    kuai_key_wipe(k);
                }
                src = kats[v].source;
                if (verbose && !what)
                    printf("      %-15s %-8s %s\n", cn, names[b], src);
            }
            if (what) {
                printf("FAIL  %-15s %-8s %s: %s\n", cn, names[b], src, what);
                fails++;
            } else {
                printf("PASS  %-15s %-8s (%zu vectors)\n", cn, names[b], nv);
                passes++;
            }
        }
    }
    free(k);
    const char *(*checks[])(void) = {check_scrypt, check_hkdf};
    const char *check_names[] = {"scrypt", "hkdf-sha256"};
    for (size_t i = 0; i < 2; i++) {
        const char *what = checks[i]();
        printf("%s  %-15s %-8s %s\n", what ? "FAIL" : "PASS", check_names[i], "openssl",
               what ? what : "");
        fails += !!what;
        passes += !what;
    }
    printf("%d passed, %d failed\n", passes, fails);
    return fails ? EXIT_SELFTEST : EXIT_OK;
}

int cmd_info(int argc, char **argv)
{
    if (has_help(argc, argv)) {
        puts("usage: kuai info\n"
             "\n"
             "Prints the kuai version, the CPU features the library detected, and for\n"
             "each cipher the backend it chooses (first) and the others usable here.\n"
             "KUAI_BACKEND=name[,name...] in the environment overrides the choice.");
        return 0;
    }
    if (argc > 1)
        fail(EXIT_USAGE, "unknown argument '%s' (see kuai info --help)", argv[1]);
    printf("kuai %s, %s\n", KUAI_VERSION, OpenSSL_version(OPENSSL_VERSION));
    const char *feats[64];
    size_t nf = kuai_cpu_feature_names(feats, 64);
    printf("cpu features:");
    for (size_t i = 0; i < nf && i < 64; i++)
        printf(" %s", feats[i]);
    printf("%s\n", nf ? "" : " (none used by kuai)");
    printf("threads: %u (default for -j)\n", default_threads());
    const char *env = getenv("KUAI_BACKEND");
    if (env)
        printf("KUAI_BACKEND: %s\n", env);
    printf("%-15s %-10s %s\n", "cipher", "chosen", "usable backends, best first");
    kuai_cipher ciphers[MAX_CIPHERS];
    size_t nciphers = cipher_list(ciphers);
    kuai_key *k = xmalloc(sizeof *k);
    for (size_t ci = 0; ci < nciphers; ci++) {
        kuai_cipher c = ciphers[ci];
        uint8_t key[32] = {0};
        const char *names[32];
        size_t nb = kuai_backends(c, names, 32);
        int rc = kuai_key_init(k, c, key, kuai_key_size(c));
        printf("%-15s %-10s", kuai_cipher_name(c), rc ? "unsupported" : kuai_key_backend(k));
        if (rc)
            printf(" (%s)", kuai_strerror(rc));
        else if (kuai_backend_leaky(kuai_key_backend(k)))
            printf(" (WARNING: not constant time, leaks key and data through the cache)");
        for (size_t b = 0; b < nb && b < 32; b++)
            printf("%s%s", b ? ", " : " ", names[b]);
        putchar('\n');
        if (!rc)
            kuai_key_wipe(k);
    }
    free(k);
    return 0;
}
